package store_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A failure resolved without usage ("the provider has no record of it")
// drops the router's estimate: the provider did no work. The attempt's own
// run, ending late and finding its attempt settled, must not put its estimate
// back (lateUsageSQL); usage the provider reported still counts. Found by
// review.
func TestNoRecordFailureStaysWithoutEstimate(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	est := map[string]any{"prompt_tokens": 40, "completion_tokens": 0, "total_tokens": 40, "estimated": true}
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "no-record", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown, Usage: est,
		Error: map[string]any{"kind": "timeout"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: a.Seq, Outcome: "failed", Note: "the provider has no record of it"}); err != nil {
		t.Fatal(err)
	}
	usage := func() string {
		t.Helper()
		read, err := b.st.GetJobAny(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range read.Attempts {
			if at.ID == a.ID {
				return string(at.Usage)
			}
		}
		t.Fatalf("attempt %s not found", a.ID)
		return ""
	}
	w, err := b.st.RecordCancelledUsage(ctx, a.ID, est)
	if err != nil {
		t.Fatal(err)
	}
	if u := usage(); w || (u != "" && u != "null") {
		t.Fatalf("written %v, usage %s: the estimate a no-record failure dropped is back", w, u)
	}
	// What the provider itself reported it billed is stored.
	reported := map[string]any{"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47}
	if w, err := b.st.RecordCancelledUsage(ctx, a.ID, reported); err != nil || !w {
		t.Fatalf("reported usage on a failed attempt: written %v, err %v; want it stored", w, err)
	}
	if u := usage(); u == "" || u == "null" {
		t.Fatalf("reported usage not stored: %q", u)
	}
}
