package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// docs/operations.md (/v1/providers, new in 7a6a045): "An attempt resolved
// out of band counts by the resolution: resolved `succeeded` (stored `won`)
// as `succeeded` ... and resolved `failed` (`failed` or `invalid`) as
// `failed`". An unknown attempt the race excused (a late failover the
// deadline cut before its budget, one cut by the router's shutdown: "breaker":
// "ignored") that an operator then resolves failed keeps its error, mark
// included, under the resolution: stats counted it in neither column. Found
// by review (rdiff62b).
func TestProviderStatsCountExcusedUnknownResolvedFailed(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "stats-excused-resolved-failed", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	excused := map[string]any{"kind": "timeout", "fault": "network", "outcome_unknown": true, store.BreakerKey: store.BreakerIgnored}
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown, Error: excused, LatencyMS: 300}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: a.Seq, Outcome: "failed",
		Note: "the provider says it failed the request"}); err != nil {
		t.Fatal(err)
	}
	var state, mark string
	if err := b.db.Pool.QueryRow(ctx, `SELECT state, coalesce(error->>'breaker', '') FROM attempts WHERE id = $1`, a.ID).Scan(&state, &mark); err != nil {
		t.Fatal(err)
	}
	stats, err := b.st.ProviderStats(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := stats["p1"]
	if p.Failed != 1 {
		t.Errorf("an attempt resolved failed (stored %s, breaker mark %q): stats attempts=%d succeeded=%d failed=%d; "+
			"docs/operations.md: resolved failed counts as failed", state, mark, p.Attempts, p.Succeeded, p.Failed)
	}
}
