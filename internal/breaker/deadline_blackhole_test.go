package breaker_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// A primary that never answers, on a route whose deadline (300ms) is shorter
// than the primary's own first-byte budget (racetest's 1m timeout), with
// hedging off: each job's first attempt had the job's whole deadline and got
// no byte. The deadline cutting it is the target's failure, not an excuse:
// the breaker used to exclude every deadline cut, stayed closed, and every
// job went to the dead primary and ended unknown. Found by review.
func TestBlackholedPrimaryOpensUnderShortDeadline(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 2, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 2, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{Deadline: 300 * time.Millisecond}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }})
	var firsts []string
	for range 4 {
		j := b.waitSettled(t, b.submit(t).ID)
		firsts = append(firsts, j.State+": "+j.Attempts[0].Provider+" "+j.Attempts[0].State)
	}
	for _, s := range set.Snapshot() {
		if s.Provider == "primary" && s.State != breaker.StateOpen {
			t.Fatalf("after 4 jobs whose first attempt got no byte within the job's whole deadline, the primary's breaker is %s (counts %+v; jobs %v)",
				s.State, s.Counts, firsts)
		}
	}
	if last := firsts[len(firsts)-1]; last != "succeeded: fallback won" {
		t.Errorf("with the primary's breaker open, the last job went %q, want to the fallback", last)
	}
}
