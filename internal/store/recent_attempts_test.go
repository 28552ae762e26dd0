package store_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// The dashboard's read of recent jobs bounds each job's attempts to its last
// ones, in one statement for all the jobs, and counts the others; a job
// without attempts has none and no first attempt. GetJobAny, which the API
// and `router jobs get` use, still reads every attempt.
func TestRecentJobsCappedReadsTheLastAttempts(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	many, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "many", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	var first *store.Attempt
	const attempts = 12
	for i := range attempts {
		a := startAttempt(t, b, many.ID, "p1", store.RoleRetry)
		if i == 0 {
			first = a
		}
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]string{"kind": "unavailable"}}); err != nil {
			t.Fatal(err)
		}
	}
	none, _, err := b.st.CreateJob(ctx, newJob(t, "globex", "triage", "none", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := b.st.RecentJobsCapped(ctx, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	for _, j := range jobs { // the dashboard shows none of them, and each can be large
		if j.Input != nil || j.Params != nil || j.Result != nil {
			t.Fatalf("job %s read with input %s, params %s, result %s: want none read", j.ID, j.Input, j.Params, j.Result)
		}
	}
	byID := map[string]store.RecentJob{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	m := byID[many.ID]
	if m.Job == nil || len(m.Attempts) != 5 || m.Earlier() != attempts-5 {
		t.Fatalf("job with %d attempts: %+v", attempts, m)
	}
	for i, a := range m.Attempts {
		if want := attempts - 5 + 1 + i; a.Seq != want || a.JobID != many.ID || a.State != store.AttemptFailed {
			t.Errorf("attempt %d: seq %d (job %s, %s), want seq %d", i, a.Seq, a.JobID, a.State, want)
		}
	}
	if m.FirstAttemptAt == nil || !m.FirstAttemptAt.Equal(first.CreatedAt) {
		t.Errorf("first attempt at %v, want %v", m.FirstAttemptAt, first.CreatedAt)
	}
	if n := byID[none.ID]; n.Job == nil || n.Earlier() != 0 || len(n.Attempts) != 0 || n.FirstAttemptAt != nil {
		t.Errorf("job without attempts: %+v", n)
	}
	full, err := b.st.GetJobAny(ctx, many.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Attempts) != attempts {
		t.Errorf("GetJobAny: %d attempts, want %d", len(full.Attempts), attempts)
	}
}
