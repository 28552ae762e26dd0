package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// docs/race.md: a target its breaker refused at routing stays among the
// candidates and "every later failover ... asks its breaker again". The
// failover's room check (failoverFits) runs before the breaker is asked
// (start, then choose): a deferred target whose breaker still refuses, and
// whose first-byte room (1 s: no first_byte_timeout) does not fit what is left
// of the deadline, stops the whole race — although the next target, eligible
// and needing 100 ms, fits. Before the deferred change b was no candidate and
// the failover went to c, which answers; now the job fails with "left no room
// for a failover to b", a target that could not have been sent anyway.
func TestDeferredTargetWithoutRoomDoesNotStopTheRace(t *testing.T) {
	adm := &switchable{open: map[string]bool{"b": true}} // b's breaker stays open
	b := racetest.New(t, racetest.Options{Route: race.Route{Deadline: 3 * time.Second, MaxInflight: 1}, Admission: adm,
		Providers: []racetest.Provider{
			// a fails with ~0.6 s of the deadline left: room for c (100 ms), not for b (1 s)
			{Name: "a", Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Latency: 2400 * time.Millisecond, Status: 400 + 100} // 500
			}},
			{Name: "b", Respond: racetest.OK(racetest.ValidTriage)},
			{Name: "c", FirstByteTimeout: 100 * time.Millisecond, Respond: racetest.OK(racetest.ValidTriage)},
		}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, error %q: want it succeeded on c (eligible, fits); b's breaker refuses it anyway", j.State, derefString(j.Error))
	}
}
