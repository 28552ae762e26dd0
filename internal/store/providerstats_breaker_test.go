package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A hedged loser still silent when the hedge it caused won is cancelled, and
// its provider's circuit breaker counts it as a failure (its error says
// "breaker": "failure"): the provider's stats count it as failed too, so that
// /v1/providers agrees with the breaker it explains. Other cancelled attempts,
// and attempts the breaker ignored, still count in neither. Before, every
// cancelled attempt counted in neither (found in review).
func TestProviderStatsCountABreakerFailedLoser(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	job, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "stats-silent", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	finish := func(state string, detail map[string]any) {
		t.Helper()
		a := startAttempt(t, b, job.ID, "p1", store.RolePrimary)
		var e any
		if detail != nil {
			e = detail
		}
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: state, Error: e, LatencyMS: 10}); err != nil {
			t.Fatal(err)
		}
	}
	finish(store.AttemptLost, nil)
	finish(store.AttemptCancelled, map[string]any{"kind": "cancelled", "message": "cancelled: another attempt won, started as a hedge",
		store.BreakerKey: store.BreakerFailure})
	finish(store.AttemptCancelled, map[string]any{"kind": "cancelled", "message": "cancelled: another attempt won"})
	finish(store.AttemptCancelled, nil)
	finish(store.AttemptFailed, map[string]any{"kind": "timeout", "fault": "network", store.BreakerKey: store.BreakerIgnored})

	stats, err := b.st.ProviderStats(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p1 := stats["p1"]
	if p1.Attempts != 2 || p1.Succeeded != 1 || p1.Failed != 1 || p1.Lost != 1 || p1.Cancelled != 3 {
		t.Fatalf("p1 %+v; want 2 with a verdict: the lost answer succeeded, the silent loser the breaker counted failed", p1)
	}
	if p1.SuccessRate == nil || math.Abs(*p1.SuccessRate-0.5) > 1e-9 {
		t.Fatalf("success rate %v, want 0.5", p1.SuccessRate)
	}
}
