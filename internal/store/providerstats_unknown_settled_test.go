package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// An attempt whose call ended unknown (its own timeout, no answer) while its
// job could still depend on it was counted a failure by its breaker; the
// job's end then settles it: lost when a resolution (or a sibling's win)
// succeeds the job, cancelled when the job is cancelled. /v1/providers' stats
// keep counting it as failed, and leave its latency (the time to the
// router's timeout) out of the percentiles, unless the race marked it
// ignored. An attempt resolved out of band counts by its verdict (won:
// succeeded; invalid: failed) and never as answer latency: its latency_ms is
// its time to the router's timeout, not to an answer.
func TestProviderStatsCountUnknownSettledByJobEnd(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	timeout := map[string]any{"kind": "timeout", "fault": "network", "outcome_unknown": true}
	// A job's attempts are created while none is unknown (CreateAttempt),
	// then end unknown.
	unknown := func(a *store.Attempt, e map[string]any) {
		t.Helper()
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown, Error: e, LatencyMS: 300}); err != nil {
			t.Fatal(err)
		}
	}
	excused := map[string]any{"kind": "timeout", "fault": "network", "outcome_unknown": true, store.BreakerKey: store.BreakerIgnored}

	// A resolution succeeds the job from p3's attempt: p1's and p2's, still
	// unknown, are settled lost.
	won, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "stats-unknown-resolved", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	a1 := startAttempt(t, b, won.ID, "p1", store.RolePrimary)
	a2 := startAttempt(t, b, won.ID, "p2", store.RoleHedge)
	a3 := startAttempt(t, b, won.ID, "p3", store.RoleHedge)
	unknown(a1, timeout)
	unknown(a2, excused)
	unknown(a3, timeout)
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: won.ID, Seq: a3.Seq, Outcome: "succeeded",
		Result: json.RawMessage(`{"ok":1}`), Note: "found in the provider's stored completions"}); err != nil {
		t.Fatal(err)
	}
	// p4's attempt is resolved invalid (its answer, found afterwards, broke the contract).
	inv, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "stats-unknown-invalid", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	a4 := startAttempt(t, b, inv.ID, "p4", store.RolePrimary)
	unknown(a4, timeout)
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: inv.ID, Seq: a4.Seq, Outcome: "failed",
		ValidationErrors: []string{"missing field"}, Note: "answer found; it breaks the contract"}); err != nil {
		t.Fatal(err)
	}
	// p5's unknown attempt is cancelled with its job.
	cj, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "stats-unknown-cancelled", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	unknown(startAttempt(t, b, cj.ID, "p5", store.RolePrimary), timeout)
	if err := b.st.CancelJob(ctx, "acme", cj.ID); err != nil {
		t.Fatal(err)
	}

	stats, err := b.st.ProviderStats(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		provider                          string
		attempts, succeeded, failed, lost int64
		cancelled, won                    int64
		why                               string
	}{
		{"p1", 1, 0, 1, 1, 0, 0, "unknown, settled lost by the resolution of a sibling: failed, as its breaker counted it"},
		{"p2", 0, 0, 0, 1, 0, 0, "unknown and excused (breaker ignored), settled lost: in neither column"},
		{"p3", 1, 1, 0, 0, 0, 1, "resolved succeeded: counted by the verdict"},
		{"p4", 1, 0, 1, 0, 0, 0, "resolved invalid: failed"},
		{"p5", 1, 0, 1, 0, 1, 0, "unknown, cancelled with its job: failed, as its breaker counted it"},
	} {
		p := stats[c.provider]
		if p.Attempts != c.attempts || p.Succeeded != c.succeeded || p.Failed != c.failed || p.Lost != c.lost ||
			p.Cancelled != c.cancelled || p.Won != c.won {
			t.Errorf("%s: stats attempts=%d succeeded=%d failed=%d lost=%d cancelled=%d won=%d; want %d/%d/%d/%d/%d/%d (%s)",
				c.provider, p.Attempts, p.Succeeded, p.Failed, p.Lost, p.Cancelled, p.Won,
				c.attempts, c.succeeded, c.failed, c.lost, c.cancelled, c.won, c.why)
		}
		if p.P50MS != nil {
			t.Errorf("%s: p50_ms=%v from an attempt that never answered within the router's timeout (latency_ms 300); want none (%s)",
				c.provider, *p.P50MS, c.why)
		}
	}
	// The mark is stored on the settled attempts (the API's attempt view
	// shows it), and an excused one keeps its own.
	marks := map[string]string{}
	rows, err := b.db.Pool.Query(ctx, `SELECT provider, coalesce(error->>'breaker', '') FROM attempts`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p, m string
		if err := rows.Scan(&p, &m); err != nil {
			t.Fatal(err)
		}
		marks[p] = m
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	want := map[string]string{"p1": store.BreakerFailure, "p2": store.BreakerIgnored, "p3": "", "p4": "", "p5": store.BreakerFailure}
	for p, m := range want {
		if marks[p] != m {
			t.Errorf("%s: stored breaker mark %q, want %q", p, marks[p], m)
		}
	}
}
