package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// boundedHistory stores 40 jobs of owner "acme", two per created_at (so that
// windows end between jobs of the same instant, ordered by id): numbered 1
// (newest) to 40 in the listing's order (ids falling with the number), failed at 7, 18 and 31, cancelled at
// 12 and 14, pending at 3, 9 and 26, operation "summarize" at 2, 23 and 40,
// the rest succeeded "triage" jobs. A job of another owner sits among them.
// It returns the jobs' ids in the listing's order.
func boundedHistory(t *testing.T, b *bundle) []string {
	t.Helper()
	ctx := context.Background()
	_, err := b.db.Pool.Exec(ctx, `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input,
			state, completed_by, result, created_at)
		SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(1000 - i), 12, '0'))::uuid,
			'acme', CASE WHEN i IN (2, 23, 40) THEN 'summarize' ELSE 'triage' END,
			'k' || i, '\x00', '1', 'default', '{}', s.state,
			CASE WHEN s.state = 'succeeded' THEN gen_random_uuid() END,
			CASE WHEN s.state = 'succeeded' THEN '{}'::jsonb END,
			'2026-01-01T00:00:00Z'::timestamptz - ((i + 1) / 2) * interval '1 second'
		FROM generate_series(1, 40) i, LATERAL (SELECT CASE
			WHEN i IN (7, 18, 31) THEN 'failed' WHEN i IN (12, 14) THEN 'cancelled'
			WHEN i IN (3, 9, 26) THEN 'pending' ELSE 'succeeded' END AS state) s`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.db.Pool.Exec(ctx, `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state, created_at)
		VALUES (gen_random_uuid(), 'globex', 'triage', 'g', '\x00', '1', 'default', '{}', 'failed',
			'2026-01-01T00:00:00Z'::timestamptz - interval '10 seconds')`)
	if err != nil {
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

// listedPages pages through f until the position is nil and returns the jobs'
// ids in order and each page's size.
func listedPages(t *testing.T, st *store.Store, f store.ListFilter) (ids []string, sizes []int) {
	t.Helper()
	for range 100 {
		jobs, next, err := st.ListJobs(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.Owner != f.Owner {
				t.Fatalf("listing crossed owners: %s of %s", j.ID, j.Owner)
			}
			ids = append(ids, j.ID)
		}
		sizes = append(sizes, len(jobs))
		if next == nil {
			return ids, sizes
		}
		f.After = next
	}
	t.Fatalf("no end after 100 pages of %+v (sizes %v)", f, sizes)
	return nil, nil
}

// A listing filtered by state or operation examines at most Scan jobs a page:
// paging until the position is nil returns every match exactly once, in
// order, with short and empty pages where a window held fewer than Limit
// matches. The live states and unfiltered listings page as before: full pages.
func TestFilteredListingPagesThroughBoundedWindows(t *testing.T) {
	b := setup(t)
	all := boundedHistory(t, b)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // job 1's instant is a second before
	at := func(ns ...int) []string {
		var ids []string
		for _, n := range ns {
			ids = append(ids, all[n-1])
		}
		return ids
	}
	for _, tc := range []struct {
		name      string
		f         store.ListFilter
		want      []string
		wantPages int // 0: not checked
	}{
		{"failed", store.ListFilter{State: "failed", Limit: 2}, at(7, 18, 31), 8},
		{"operation", store.ListFilter{Operation: "summarize", Limit: 2}, at(2, 23, 40), 8},
		{"none", store.ListFilter{State: "failed", Operation: "summarize", Limit: 2}, nil, 8},
		// Two matches in one window, Limit 1: the page ends at the first,
		// and the next page's window starts right after it.
		{"limit within a window", store.ListFilter{State: "cancelled", Limit: 1}, at(12, 14), 0},
		// Jobs 17 to 32 only.
		{"created bounds", store.ListFilter{State: "failed", Limit: 2,
			CreatedBefore: base.Add(-8 * time.Second), CreatedAfter: base.Add(-17 * time.Second)}, at(18, 31), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.Owner, f.Scan = "acme", 5
			ids, sizes := listedPages(t, b.st, f)
			if fmt.Sprint(ids) != fmt.Sprint(tc.want) {
				t.Fatalf("pages %v gave\n%v\nwant\n%v", sizes, ids, tc.want)
			}
			if tc.wantPages != 0 && len(sizes) != tc.wantPages {
				t.Errorf("%d pages (sizes %v), want %d: one per window of 5 of the 40 jobs", len(sizes), sizes, tc.wantPages)
			}
			if !hasEmptyBefore(sizes) && len(tc.want) > 0 {
				t.Errorf("page sizes %v: no empty page with a position, yet most windows of 5 hold no match", sizes)
			}
		})
	}

	// A window without a match: an empty page that continues after the last
	// job examined (the 5th).
	jobs, next, err := b.st.ListJobs(context.Background(), store.ListFilter{Owner: "acme", State: "failed", Limit: 2, Scan: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 || next == nil || next.ID != all[4] {
		t.Fatalf("first page of state=failed with 5 examined: %d jobs, position %+v; want none, continuing after %s", len(jobs), next, all[4])
	}

	// Live states and unfiltered listings are not windowed: full pages.
	for _, f := range []store.ListFilter{
		{State: "pending", Limit: 2},
		{State: "pending", Operation: "triage", Limit: 2},
		{Limit: 16},
	} {
		f.Owner, f.Scan = "acme", 5
		ids, sizes := listedPages(t, b.st, f)
		want := at(3, 9, 26)
		if f.State == "" {
			want = all
		}
		if fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("%+v: gave %v, want %v", f, ids, want)
		}
		for i, n := range sizes[:len(sizes)-1] {
			if n != f.Limit {
				t.Errorf("%+v: page %d of %v is short: live states and unfiltered listings fill their pages", f, i, sizes)
			}
		}
	}
}

// hasEmptyBefore reports whether a page other than the last was empty.
func hasEmptyBefore(sizes []int) bool {
	for _, n := range sizes[:len(sizes)-1] {
		if n == 0 {
			return true
		}
	}
	return false
}

// A page of a filter that matches nothing reads at most the scan bound of
// the owner's jobs, however long its history: without the bound it read all
// 5,000 (at 450,000 jobs, 1.3 s for one request). The plan checked is the one
// the store ran, with its actual row counts (auto_explain, reported to this
// test's connection). The window reads DefaultListScan+1 jobs (the last to
// tell whether jobs remain). Walking jobs_owner_created_id that is all; the
// planner may walk jobs_created instead (here, where one owner has every job)
// and then reads up to two more: the job at the position (that index's
// condition is on created_at alone) and the one that ends the incremental
// sort's last group of equal created_at. A filter that matches every job
// stops at its page: the window is a bound, not a cost every page pays.
func TestFilteredListingReadsABoundedNumberOfRows(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	const history = 5000
	_, err := b.db.Pool.Exec(ctx, `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input,
			state, completed_by, result, created_at)
		SELECT gen_random_uuid(), 'acme', 'triage', 'k' || i, '\x00', '1', 'default', '{}', 'succeeded',
			gen_random_uuid(), '{}', now() - i * interval '1 second'
		FROM generate_series(1, $1::int) i`, history)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `ANALYZE jobs`); err != nil {
		t.Fatal(err)
	}
	pool, plans := explainingPool(t, b)
	st := store.New(pool, store.Options{KeyRetention: time.Hour})
	var middle store.ListPosition
	if err := b.db.Pool.QueryRow(ctx, `SELECT created_at, id::text FROM jobs ORDER BY created_at DESC, id DESC OFFSET 2000 LIMIT 1`).
		Scan(&middle.CreatedAt, &middle.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    store.ListFilter
		jobs int     // on the page
		most float64 // rows of jobs read
	}{
		{"state", store.ListFilter{State: "failed", Limit: 50}, 0, store.DefaultListScan + 3},
		{"operation", store.ListFilter{Operation: "never-used", Limit: 200}, 0, store.DefaultListScan + 3},
		{"both, deep", store.ListFilter{State: "cancelled", Operation: "triage", Limit: 50, After: &middle}, 0, store.DefaultListScan + 3},
		// The window's jobs up to the page's (and two more), each match
		// read again whole by primary key.
		{"every job matches", store.ListFilter{State: "succeeded", Limit: 50}, 50, 2 * (50 + 3)},
	} {
		f := tc.f
		f.Owner = "acme"
		jobs, next, err := st.ListJobs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != tc.jobs || next == nil {
			t.Errorf("%s: %d jobs, position %v; want %d and a position to go on from", tc.name, len(jobs), next, tc.jobs)
		}
		listings := plans("ORDER BY j.created_at DESC, j.id DESC")
		if len(listings) != 1 {
			t.Fatalf("%s: %d plans of the listing statement reported, want 1", tc.name, len(listings))
		}
		read := listings[0].Plan.rowsRead("jobs")
		t.Logf("%s: read %.0f rows of jobs", tc.name, read)
		if read > tc.most {
			t.Errorf("%s: one page read %.0f rows of jobs, want at most %.0f (history %d, bound %d)\n%s",
				tc.name, read, tc.most, history, store.DefaultListScan, listings[0].JSON)
		}
	}
}
