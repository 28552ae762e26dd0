package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// liveListingJobs makes jobs of two owners in every live state and an ended
// one, some with several attempts (unknown among them, out of seq order of
// states), and three created in the same microsecond (the order is then by
// id).
func liveListingJobs(t *testing.T, b *bundle) {
	t.Helper()
	ctx := context.Background()
	mk := func(owner, key, state string, attemptStates ...string) string {
		t.Helper()
		j, _, err := b.st.CreateJob(ctx, newJob(t, owner, "triage", key, fmt.Sprintf(`{"ticket":%q}`, key)))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := range attemptStates {
			a := startAttempt(t, b, j.ID, fmt.Sprintf("p%d", i+1), store.RoleRetry)
			if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET state = 'failed', finished_at = now() WHERE id = $1`, a.ID); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
		}
		for i, s := range attemptStates { // set once they all exist: none is made beside an unknown one
			if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET state = $2 WHERE id = $1`, ids[i], s); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET state = $2 WHERE id = $1`, j.ID, state); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	mk("acme", "a1", store.JobUnknown, store.AttemptFailed, store.AttemptUnknown, store.AttemptLost, store.AttemptUnknown)
	mk("globex", "g1", store.JobPending)
	mk("acme", "a2", store.JobRunning, store.AttemptRunning)
	mk("acme", "a3", store.JobFailed, store.AttemptFailed)
	tied := []string{
		mk("globex", "g2", store.JobUnknown, store.AttemptUnknown),
		mk("acme", "a4", store.JobPending),
		mk("globex", "g3", store.JobRunning, store.AttemptFailed, store.AttemptRunning),
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET created_at = (SELECT max(created_at) FROM jobs) WHERE id = ANY($1::uuid[])`, tied); err != nil {
		t.Fatal(err)
	}
	mk("acme", "a5", store.JobUnknown, store.AttemptUnknown)
}

// What `router jobs list` prints of a job, from the job read whole.
func summaryOf(j *store.Job) store.JobSummary {
	s := store.JobSummary{ID: j.ID, Owner: j.Owner, Operation: j.Operation, State: j.State, CreatedAt: j.CreatedAt, Attempts: len(j.Attempts)}
	for _, a := range j.Attempts {
		if a.State == store.AttemptUnknown {
			s.Unknown = append(s.Unknown, store.AttemptRef{Provider: a.Provider, Seq: a.Seq})
		}
	}
	return s
}

type liveFilter struct {
	states []string
	owner  string
}

var liveFilters = []liveFilter{
	{nil, ""}, {[]string{store.JobUnknown}, ""}, {[]string{store.JobPending, store.JobRunning}, "globex"},
	{nil, "acme"}, {[]string{store.JobUnknown}, "nobody"}, {[]string{store.JobFailed}, ""},
}

// The summaries `router jobs list` prints its table from are those of the
// jobs LiveJobs reads whole, in the same order, under the same filters and
// limit: before, the table was printed from every job read whole (input,
// result, routing, attempts and race events).
func TestLiveJobSummariesAreThoseOfLiveJobs(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	liveListingJobs(t, b)
	for _, f := range liveFilters {
		for _, limit := range []int{1, 2, 3, 100} {
			jobs, err := b.st.LiveJobs(ctx, f.states, f.owner, limit)
			if err != nil {
				t.Fatal(err)
			}
			want := []store.JobSummary{}
			for _, j := range jobs {
				want = append(want, summaryOf(j))
			}
			got, err := b.st.LiveJobSummaries(ctx, f.states, f.owner, limit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("states %v owner %q limit %d:\n got %+v\nwant %+v", f.states, f.owner, limit, got, want)
			}
		}
	}
	all, err := b.st.LiveJobSummaries(ctx, nil, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 7 || all[0].Attempts != 4 || !reflect.DeepEqual(all[0].Unknown, []store.AttemptRef{{"p2", 2}, {"p4", 4}}) {
		t.Fatalf("every live job: %+v; want 7, the oldest with 4 attempts, p2 #2 and p4 #4 unknown", all)
	}
}

// Paged by LiveJobsPage, from each page's last job, the live jobs come out
// as LiveJobs reads them at once, byte for byte in JSON, whatever the page
// size; a page bounded by bytes holds one job at least and says it was cut.
func TestLiveJobsPagesAreLiveJobs(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	liveListingJobs(t, b)
	for _, f := range liveFilters {
		whole, err := b.st.LiveJobs(ctx, f.states, f.owner, 100)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(whole)
		for _, page := range []int{1, 2, 3, 100} {
			for _, maxBytes := range []int{0, 1} {
				paged := []*store.Job{}
				var after *store.LivePosition
				for pages := 0; ; pages++ {
					if pages > 10 {
						t.Fatalf("states %v owner %q page %d: no end after %d pages", f.states, f.owner, page, pages)
					}
					jobs, cut, err := b.st.LiveJobsPage(ctx, f.states, f.owner, after, page, maxBytes)
					if err != nil {
						t.Fatal(err)
					}
					if maxBytes == 1 && len(jobs) > 1 {
						t.Fatalf("a page of at most 1 byte holds %d jobs, want 1", len(jobs))
					}
					paged = append(paged, jobs...)
					if !cut && len(jobs) < page {
						break
					}
					if len(jobs) == 0 {
						t.Fatalf("states %v owner %q page %d: an empty page says it was cut", f.states, f.owner, page)
					}
					last := jobs[len(jobs)-1]
					after = &store.LivePosition{CreatedAt: last.CreatedAt, ID: last.ID}
				}
				if got, _ := json.Marshal(paged); string(got) != string(want) {
					t.Errorf("states %v owner %q, pages of %d (%d bytes):\n got %s\nwant %s", f.states, f.owner, page, maxBytes, got, want)
				}
			}
		}
	}
	if _, _, err := b.st.LiveJobsPage(ctx, nil, "", &store.LivePosition{ID: "not-a-uuid"}, 10, 0); err == nil {
		t.Error("a position whose id is not a job id was accepted")
	}
}
