package breaker_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// docs (race/retry_wait.go, TestRetryWhoseTargetNeedsMoreThanIsLeftFailsOver):
// a retry that would have less than its target's first-byte budget before
// the job's deadline is not made while the route has a target left to fail
// over to "whose circuit breaker would admit it now"; the race fails over.
// fallbackAdmitsNow asks AdmitsIn, which says (0, known=false) for every
// half-open breaker — also one with a probe free, which admits at once. So a
// fallback whose breaker is half-open with its probe free counts as "would
// not admit": the doomed retry is made, the deadline cuts it before any
// response byte, and the job ends without its fallback ever being asked —
// though the fallback's breaker would have admitted it as its probe (and its
// success would have closed it).
func TestRetryWithNoRoomFailsOverToHalfOpenFallback(t *testing.T) {
	clock := newTestClock()
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 100, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 1, OpenFor: time.Minute, HalfOpenProbes: 1},
	}, breaker.Options{Now: clock.Now})
	defer set.Close()
	// The fallback failed once (its breaker opened), and open_for has passed:
	// half-open, its one probe free.
	release, ok, why := set.Admit("fallback")
	if !ok {
		t.Fatalf("set-up: %s", why)
	}
	release(race.OutcomeFailure)
	clock.Advance(2 * time.Minute)
	if !set.HalfOpen("fallback") {
		t.Fatal("set-up: fallback's breaker not half-open")
	}
	if ok, why := set.State("fallback"); !ok {
		t.Fatalf("set-up: fallback's half-open breaker would refuse: %s", why)
	}
	b := racetest.New(t, racetest.Options{Route: race.Route{Deadline: 3 * time.Second}, Admission: set, Providers: []racetest.Provider{
		{Name: "primary", MaxRetries: 1, FirstByteTimeout: time.Minute, Respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 429, RetryAfter: 100 * time.Millisecond}
			}
			return providers.Step{Hang: true} // would answer, not within what is left of the deadline
		}},
		{Name: "fallback", Respond: racetest.OK(validTriage)},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded || b.Prov["fallback"].Calls() != 1 {
		t.Errorf("job %s (%v), primary called %d times, fallback %d: want the primary's 429 failed over to the fallback, "+
			"whose half-open breaker admits its probe now, not a retry the deadline cuts before any byte",
			j.State, errOf(j), b.Prov["primary"].Calls(), b.Prov["fallback"].Calls())
	}
}

func errOf(j *store.Job) string {
	if j.Error == nil {
		return ""
	}
	return *j.Error
}
