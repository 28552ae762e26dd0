package breaker_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// A hedge started shortly before the job's deadline is cut by that deadline:
// the router's own deadline ended it, not its (healthy) target, so it is not
// counted against the target's breaker — two such jobs used to open the
// fallback's breaker on exactly the jobs that needed it. Found by review.
func TestDeadlineCutHedgeIsNotItsTargetsFailure(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 100, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 2, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{Deadline: 1500 * time.Millisecond, HedgeAfter: time.Second}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Latency: time.Second, Output: validTriage} // within its own timeout; past the job's deadline
		}})
	for range 2 {
		b.waitSettled(t, b.submit(t).ID)
	}
	for _, s := range set.Snapshot() {
		if s.Provider == "fallback" && s.State != breaker.StateClosed {
			t.Fatalf("the fallback's breaker is %s: the job's deadline cutting its hedge was counted as its failure", s.State)
		}
	}
}
