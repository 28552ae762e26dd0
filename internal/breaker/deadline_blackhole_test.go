package breaker_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
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
	var last *store.Job
	for range 4 {
		last = b.waitSettled(t, b.submit(t).ID)
		if len(last.Attempts) == 0 {
			t.Fatalf("job %s made no attempt (jobs before it: %v)", last.State, firsts)
		}
		firsts = append(firsts, last.State+": "+last.Attempts[0].Provider+" "+last.Attempts[0].State)
	}
	for _, s := range set.Snapshot() {
		if s.Provider == "primary" && s.State != breaker.StateOpen {
			t.Fatalf("after 4 jobs whose first attempt got no byte within the job's whole deadline, the primary's breaker is %s (counts %+v; jobs %v)",
				s.State, s.Counts, firsts)
		}
	}
	// Where the last job went, not whether the fallback also answered
	// within the short deadline (on a loaded machine it may not: that is
	// not the breaker's doing).
	var went []string
	onFallback := true
	for _, a := range last.Attempts {
		went = append(went, a.Provider+" "+a.State)
		onFallback = onFallback && a.Provider == "fallback"
	}
	if !onFallback {
		t.Errorf("with the primary's breaker open, the last job (%s) made attempts %v, want them on the fallback only",
			last.State, went)
	}
}
