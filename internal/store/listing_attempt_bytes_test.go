package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// childHeavyJobs stores 20 jobs of owner "acme", all created in one
// statement (one created_at: the listing orders them by id), in state, each
// with 2,000 attempts of about 370 bytes of error (attempts) or 2,000 race
// events of 300 bytes of detail (race events), and returns their ids in the
// listing's order (newest first).
func childHeavyJobs(t *testing.T, b *bundle, state, children string) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
		SELECT gen_random_uuid(), 'acme', 'triage', 'k' || g, '\x00', '1', 'default', '{}', $1
		FROM generate_series(1, 20) g`, state); err != nil {
		t.Fatal(err)
	}
	q := `INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, error, finished_at)
		SELECT gen_random_uuid(), j.id, s, 'primary', 'retry', 'failed', 1,
			jsonb_build_object('kind', 'unavailable', 'status', 503, 'message', repeat('m', 300)), now()
		FROM jobs j CROSS JOIN generate_series(1, 2000) s WHERE j.owner = 'acme'`
	if children == "race events" {
		q = `INSERT INTO race_events (job_id, kind, provider, detail)
			SELECT j.id, 'late_result', 'primary', repeat('d', 300)
			FROM jobs j CROSS JOIN generate_series(1, 2000) s WHERE j.owner = 'acme'`
	}
	if _, err := b.db.Pool.Exec(ctx, q); err != nil {
		t.Fatal(err)
	}
	rows, err := b.db.Pool.Query(ctx, `SELECT id::text FROM jobs WHERE owner = 'acme' ORDER BY created_at DESC, id DESC`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkPageBytes fails the test when the jobs of a page bounded at maxBytes,
// but its last, come to more than maxBytes of JSON: the page went on after
// the bytes it held had passed the bound.
func checkPageBytes(t *testing.T, page int, jobs []*store.Job, maxBytes int) {
	t.Helper()
	total := 0
	for i, j := range jobs {
		n := len(j.AppendJSON(nil))
		if store.JobBytes(j) < n {
			t.Fatalf("page %d job %d: JobBytes %d is less than its %d bytes of JSON", page, i, store.JobBytes(j), n)
		}
		if i < len(jobs)-1 {
			total += n
		}
	}
	if total > maxBytes {
		t.Fatalf("page %d bounded at %d bytes held %d jobs, %d bytes of JSON before its last (%d attempts, %d race events each)",
			page, maxBytes, len(jobs), total, len(jobs[0].Attempts), len(jobs[0].RaceEvents))
	}
}

// A page's byte bound counts the attempts and race events of its jobs, which
// the store reads whole with them: 20 jobs of 2,000 attempts each (or 2,000
// race events) are 27 MB of JSON, and a page bounded at 1 MiB read all of
// them before (the bound counted input, params, result and routing alone).
// Now a page stops once its jobs, attempts counted, pass the bound, holds at
// least one job whole however large, and its position continues right after
// its last job: paging on lists every job once, in order. The same for
// `router jobs list --json`'s pages (LiveJobsPage). Found by review.
func TestListJobsPageBytesCountAttempts(t *testing.T) {
	const maxBytes = 1 << 20
	for _, children := range []string{"attempts", "race events"} {
		t.Run(children, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			all := childHeavyJobs(t, b, store.JobFailed, children)
			var paged []string
			f := store.ListFilter{Owner: "acme", Limit: 50, MaxBytes: maxBytes}
			for page := 0; ; page++ {
				if page > len(all) {
					t.Fatalf("no end after %d pages", page)
				}
				jobs, next, err := b.st.ListJobs(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(jobs) == 0 {
					t.Fatalf("page %d is empty", page)
				}
				checkPageBytes(t, page, jobs, maxBytes)
				for _, j := range jobs {
					if len(j.Attempts)+len(j.RaceEvents) != 2000 {
						t.Fatalf("job %s read with %d attempts and %d race events, want all 2000 %s", j.ID, len(j.Attempts), len(j.RaceEvents), children)
					}
					paged = append(paged, j.ID)
				}
				if next == nil {
					break
				}
				last := jobs[len(jobs)-1]
				if next.ID != last.ID || !next.CreatedAt.Equal(last.CreatedAt) {
					t.Fatalf("page %d ends at %s but continues from %+v", page, last.ID, next)
				}
				f.After = next
			}
			if !slices.Equal(paged, all) {
				t.Fatalf("paged %d jobs %v, want the %d in order %v", len(paged), paged, len(all), all)
			}
			// A bound below one job: the page holds that job, whole.
			jobs, next, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 50, MaxBytes: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 || jobs[0].ID != all[0] || len(jobs[0].Attempts)+len(jobs[0].RaceEvents) != 2000 || next == nil || next.ID != all[0] {
				t.Fatalf("MaxBytes below one job: %d jobs, next %+v; want the newest job alone, whole, and a position after it", len(jobs), next)
			}
			// The scan-bounded listing (a filter by a state that is not live) counts the same.
			jobs, _, err = b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", State: store.JobFailed, Limit: 50, MaxBytes: maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			checkPageBytes(t, 0, jobs, maxBytes)
		})
	}
}

// LiveJobsPage (`router jobs list --json`) bounds its pages the same way:
// attempts and race events counted, the page cut after the job that passes
// the bound, paging on from its last job lists every job once, in order.
func TestLiveJobsPageBytesCountAttempts(t *testing.T) {
	const maxBytes = 1 << 20
	for _, children := range []string{"attempts", "race events"} {
		t.Run(children, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			all := childHeavyJobs(t, b, store.JobUnknown, children)
			slices.Reverse(all) // LiveJobs' order: oldest first
			var paged []string
			var after *store.LivePosition
			for page := 0; ; page++ {
				if page > len(all) {
					t.Fatalf("no end after %d pages", page)
				}
				jobs, cut, err := b.st.LiveJobsPage(ctx, nil, "acme", after, 50, maxBytes)
				if err != nil {
					t.Fatal(err)
				}
				if len(jobs) > 0 {
					checkPageBytes(t, page, jobs, maxBytes)
				}
				for _, j := range jobs {
					paged = append(paged, j.ID)
				}
				if !cut && len(jobs) < 50 {
					break
				}
				last := jobs[len(jobs)-1]
				after = &store.LivePosition{CreatedAt: last.CreatedAt, ID: last.ID}
			}
			if !slices.Equal(paged, all) {
				t.Fatalf("paged %d jobs %v, want the %d in order %v", len(paged), paged, len(all), all)
			}
		})
	}
}
