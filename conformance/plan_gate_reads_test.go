package conformance_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// Under the default gate (fallbacks) the primary is never gated, but the plan
// of a job asks the gate about each fallback before the primary's attempt
// starts. It asked one fallback after another: while conformance_runs could
// not be read (locked by ALTER TABLE, REINDEX or VACUUM FULL) each read
// waited for the gate's read timeout (5 s), so three fallbacks held the
// ungated primary back 15 s. The plan now asks the gate about all its
// targets at once: the first read to reach the database finds the reads of
// all three fallbacks asked for (in flight together, so the plan waits for
// one timeout, not three), each read that times out refuses its fallback
// (the gate fails closed), and the primary answers. Found in review
// (rconf2).
func TestPlanAsksTheGateAboutEveryFallbackAtOnce(t *testing.T) {
	e := newEnv(t)
	e.add("primary", oracle(e.answers, nil))
	fallbacks := []string{"fb1", "fb2", "fb3"}
	for _, fb := range fallbacks {
		e.add(fb, oracle(e.answers, nil))
	}
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour)
	var mu sync.Mutex
	var inFlight []int // at each read, the reads asked for and not finished
	// Each read waits on the lock until this timeout ends it: the test
	// asserts nothing of how long that takes.
	conformance.WatchGateReads(gate, 200*time.Millisecond, func(n int) {
		mu.Lock()
		inFlight = append(inFlight, n)
		mu.Unlock()
	})
	e.startRunner(t, gate)

	ctx := context.Background()
	tx, err := e.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE conformance_runs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	j := e.job(t)
	if j.State != store.JobSucceeded || winner(j) != "primary" {
		t.Fatalf("job %s won by %q, want the ungated primary to answer", j.State, winner(j))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(inFlight) != len(fallbacks) || slices.Max(inFlight) != len(fallbacks) {
		t.Errorf("the plan's gate reads (%d, want one per fallback: %d) reached the database with %v reads asked for at each; "+
			"want the first to find all %d fallbacks' reads asked for: the plan asks the gate one fallback after another, "+
			"and a locked conformance_runs holds the ungated primary back one read timeout per fallback",
			len(inFlight), len(fallbacks), inFlight, len(fallbacks))
	}
	var routing []race.Decision
	if err := json.Unmarshal(j.Routing, &routing); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	for _, fb := range fallbacks {
		i := slices.IndexFunc(routing, func(d race.Decision) bool { return d.Provider == fb && d.Event == "" })
		if i < 0 || routing[i].Eligible || routing[i].Cause != race.CauseConformanceGate ||
			!strings.Contains(routing[i].Reason, "cannot read conformance results for triage@3") {
			t.Errorf("routing of %s with its gate read timed out: %s; want it refused by the gate (fail closed)", fb, j.Routing)
		}
	}
}
