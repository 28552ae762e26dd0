package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// docs/providers.md (Cost): for "an attempt settled by another hand while its
// request was out: an unknown attempt settled lost when another attempt won,
// or resolved failed by an operator or reconciliation", "A valid answer, or a
// failure the provider billed, that comes for it afterwards stores its usage
// on the attempt (in place of none or of the router's estimate, never of
// reported usage)". Reconciliation that finds the provider's record of a
// failure without usage resolves the attempt failed with the router's
// estimate (race's reconcileOne → estimatedUsage, marked estimated). When the
// attempt's own run — on a replica that stalled past its lease, its request
// still out — then ends with the failure the provider billed (its reported
// usage, not estimated), finishAttempt finds the attempt settled and calls
// RecordCancelledUsage, whose lateUsageSQL is run with $3 false: the reported
// usage does not replace the estimate. A valid answer coming the same way
// does (discard runs lateUsageSQL with $3 true), so the billed failure's
// reported cost is lost although the docs promise both.
func TestLateBilledFailureReplacesReconciledEstimate(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "late-billed-over-estimate", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	// Unknown without usage, as a lease expiry leaves an attempt whose router stalled.
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown,
		Error: map[string]any{"kind": "timeout"}}); err != nil {
		t.Fatal(err)
	}
	// Reconciliation found the provider's record of a failure without usage: the router's estimate.
	est := map[string]any{"prompt_tokens": 40, "completion_tokens": 0, "total_tokens": 40, "estimated": true}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{JobID: j.ID, Seq: a.Seq, Outcome: "failed",
		Note: "reconciled: the provider's stored completion was filtered", Usage: est}); err != nil {
		t.Fatal(err)
	}
	// The attempt's own run ends late with the failure the provider billed, its usage reported.
	reported := map[string]any{"prompt_tokens": 52, "completion_tokens": 310, "total_tokens": 362}
	w, err := b.st.RecordCancelledUsage(ctx, a.ID, reported)
	if err != nil {
		t.Fatal(err)
	}
	read, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var u map[string]any
	for _, at := range read.Attempts {
		if at.ID == a.ID {
			_ = json.Unmarshal(at.Usage, &u)
		}
	}
	if !w || u["estimated"] == true || u["completion_tokens"] != float64(310) {
		t.Errorf("written %v, usage %v: the failure the provider billed (reported %v) did not replace the router's estimate "+
			"(docs/providers.md: \"in place of none or of the router's estimate\")", w, u, reported)
	}
}
