package breaker_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// docs/operations.md (What counts): "… so a target that never answers opens
// its breaker even on a route whose deadline is shorter than its
// first_byte_timeout" — made true for the job's opening attempt only
// (excusedByDeadline's `opening`). A *fallback* that never answers, on such a
// route, is reached only by failovers (and hedges), which always get less
// than the route's deadline and so less than their first-byte budget: every
// deadline cut of it is excused (OutcomeIgnore, "breaker": "ignored"), so its
// breaker can never count it. With a flaky primary (its breaker closed: it
// fails every other job), every job that fails over goes to the black hole
// and ends `unknown` — needing a resolution — without end, where a breaker
// that opened would have failed them knowably, at once.
func TestBlackholedFallbackOpensUnderShortDeadline(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 5, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 2, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{Deadline: 1500 * time.Millisecond}, set, nil,
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call%2 == 1 {
				return providers.Step{Status: 500} // flaky: every other call
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }})
	var jobs []string
	for range 6 {
		j := b.waitSettled(t, b.submit(t).ID)
		s := j.State + ":"
		for _, a := range j.Attempts {
			s += " " + a.Provider + "=" + a.State
		}
		jobs = append(jobs, s)
	}
	for _, s := range set.Snapshot() {
		if s.Provider == "fallback" && s.State != breaker.StateOpen {
			t.Errorf("after 3 failovers to a fallback that never sent a byte (each cut by the job's deadline of 1.5s, its first-byte budget 1m), "+
				"its breaker is %s (counts %+v); jobs: %v", s.State, s.Counts, jobs)
		}
	}
}
