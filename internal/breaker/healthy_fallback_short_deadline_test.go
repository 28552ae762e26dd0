package breaker_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// docs/operations.md (What counts): a target reached on a route whose
// deadline is shorter than its first-byte budget only by failovers is not
// counted when the deadline cuts it: a healthy but slow fallback (it answers
// every request in 2.5 s, within its 1 m budget) behind a primary that fails
// after 1.6 s of a 3 s deadline gets ~1.4 s and is cut, and its breaker must
// stay closed (it is the target's on every route). Found by review (rdiff62):
// a bar of 1 s for late failovers, tried this session and reverted, opened it.
func TestHealthyFallbackNotOpenedByLateFailoverCuts(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 100, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 2, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{Deadline: 3 * time.Second}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Latency: 1600 * time.Millisecond, Status: 500}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Latency: 2500 * time.Millisecond, Output: validTriage} // healthy, 2.5 s to answer
		}})
	var jobs []string
	for range 3 {
		j := b.waitSettled(t, b.submit(t).ID)
		s := j.State + ":"
		for _, a := range j.Attempts {
			s += " " + a.Provider + "=" + a.State
		}
		jobs = append(jobs, s)
	}
	for _, s := range set.Snapshot() {
		if s.Provider == "fallback" && s.State == breaker.StateOpen {
			t.Errorf("a healthy fallback (answers in 2.5s, budget 1m) cut by a 3s route's deadline ~1.4s after each late failover "+
				"has its breaker opened (counts %+v); jobs: %v", s.Counts, jobs)
		}
	}
}
