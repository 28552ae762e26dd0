package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// The dashboard's latency bought by hedging compares a winning hedge with the
// attempt it hedged: the job's latest primary, retry or failover created
// before it, not the job's first primary. A hedge that won beside a retry
// (its primary had failed at once) bought the retry's end minus its own;
// against the first primary, which had ended long before, it counted 0.
// The plain case (a hedge beside its primary) is measured as before.
// Found by review (rtok13).
func TestLatencyBoughtComparesWithTheHedgedAttempt(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	// Each job's attempts, in seq order: role, state, and when it ended
	// (seconds before one moment, now).
	type at struct {
		role, state string
		endedAgo    float64
	}
	var now time.Time
	if err := b.db.Pool.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	for i, attempts := range [][]at{
		{{store.RolePrimary, store.AttemptFailed, 10}, {store.RoleRetry, store.AttemptLost, 1}, {store.RoleHedge, store.AttemptWon, 3}},
		{{store.RolePrimary, store.AttemptLost, 1}, {store.RoleHedge, store.AttemptWon, 1.5}},
	} {
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "hedged-"+string(rune('a'+i)), `{}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range attempts {
			a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p-" + x.role, Role: x.role, LeaseOwner: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET state = $2, finished_at = $3::timestamptz - make_interval(secs => $4) WHERE id = $1`,
				a.ID, x.state, now, x.endedAgo); err != nil {
				t.Fatal(err)
			}
		}
	}
	h, err := b.st.RecentHedgeCost(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// (1 s − 3 s ago: 2,000 ms) and (1 s − 1.5 s ago: 500 ms).
	if want := (2000.0 + 500.0) / 2; h.HedgeWins != 2 || math.Abs(h.LatencyBoughtMS-want) > 1e-6 {
		t.Fatalf("hedge wins %d, latency bought %v ms; want 2 and %v ms (the retry's end, not the failed primary's, for the hedge that won beside it)",
			h.HedgeWins, h.LatencyBoughtMS, want)
	}
}
