package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// SPEC §17: "no job becomes unknown because a process was told to stop". A
// job whose primary is silent is saved by its hedge (the silent primary,
// unknown after its deadline, is then settled lost). When SIGTERM arrives
// after the primary was sent and before the hedge is due, the draining runner
// still starts the hedge, since the hedge's first-byte deadline (its target's
// timeout, 5 s) ends before the drain's (30 s). (Found in review: the drain
// refused the hedge, and the job ended unknown.) The control run has no drain.
func TestDrainLetsAHedgeRescueASilentPrimary(t *testing.T) {
	for _, drain := range []bool{false, true} {
		name := "no drain"
		if drain {
			name = "drain before the hedge is due"
		}
		t.Run(name, func(t *testing.T) {
			called := make(chan struct{}, 1)
			b := setup(t, race.Route{HedgeAfter: 300 * time.Millisecond},
				provSpec{name: "primary", timeout: 2 * time.Second, respond: func(int, *providers.Request) providers.Step {
					called <- struct{}{}
					return providers.Step{Hang: true} // sent, never a byte
				}},
				provSpec{name: "fallback", timeout: 5 * time.Second, respond: ok(validTriage)},
			)
			job := b.submit(t)
			<-called
			if drain {
				b.runner.Drain(30 * time.Second) // SIGTERM
				b.stop()
			}
			j := b.waitSettled(t, job.ID)
			if j.State != store.JobSucceeded {
				t.Fatalf("job ended %s with attempts %s: it became %s because the process was told to stop (a hedge would have saved it)",
					j.State, roles(j), j.State)
			}
			if f := attemptBy(j, "fallback"); f == nil || f.Role != store.RoleHedge {
				t.Fatalf("attempts %s: want the fallback's hedge to win", roles(j))
			}
		})
	}
}

// A drain starts only a hedge that ends before the drain does: with a drain
// budget of a second and a hedge target whose timeout is a minute, no hedge
// starts (nor any failover), and the silent primary ends the job unknown at
// its own deadline, as before.
func TestDrainStartsNoHedgeThatWouldOutlastIt(t *testing.T) {
	called := make(chan struct{}, 1)
	b := setup(t, race.Route{HedgeAfter: 100 * time.Millisecond},
		provSpec{name: "primary", timeout: 300 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
			called <- struct{}{}
			return providers.Step{Hang: true}
		}},
		provSpec{name: "fallback", timeout: time.Minute, respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-called
	b.runner.Drain(time.Second)
	b.stop()
	j := b.job(t, job.ID)
	if n := b.prov["fallback"].Calls(); n != 0 || j.State != store.JobUnknown {
		t.Fatalf("job %s, fallback called %d times (%s): want no hedge whose minute outlasts the drain's second", j.State, n, roles(j))
	}
}

// What must fit in the drain is the hedge's first-byte deadline, not its
// whole timeout: by then its outcome is known (silent: unknown by its own
// provider's doing; answering: finished, or recorded failed and handed over if
// the drain cuts it). With the default drain — the longest timeout — and a
// first_byte_timeout of half the timeout, a hedge due early in the drain fits.
func TestDrainHedgeNeedsOnlyItsFirstByteDeadlineToFit(t *testing.T) {
	called := make(chan struct{}, 1)
	b := setup(t, race.Route{HedgeAfter: 300 * time.Millisecond},
		provSpec{name: "primary", timeout: 2 * time.Second, respond: func(int, *providers.Request) providers.Step {
			called <- struct{}{}
			return providers.Step{Hang: true}
		}},
		provSpec{name: "fallback", timeout: time.Minute, firstByte: 5 * time.Second, respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-called
	b.runner.Drain(30 * time.Second) // shorter than the fallback's minute, longer than its 5 s to a first byte
	b.stop()
	j := b.waitSettled(t, job.ID)
	if f := attemptBy(j, "fallback"); j.State != store.JobSucceeded || f == nil || f.Role != store.RoleHedge {
		t.Fatalf("job %s with attempts %s: want the fallback's hedge to start in the drain and win", j.State, roles(j))
	}
}

// roles lists a job's attempts as provider/role=state.
func roles(j *store.Job) string {
	s := ""
	for _, a := range j.Attempts {
		s += a.Provider + "/" + a.Role + "=" + a.State + " "
	}
	return s
}
