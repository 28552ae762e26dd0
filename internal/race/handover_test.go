package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A job created (with its first attempt) just as its runner stops is never
// sent: the attempt says so, and the job is free at once for another replica
// instead of waiting for a lease to expire and turning unknown.
func TestJobCreatedWhileStoppingIsHandedOver(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	b.stop()
	job := b.submit(t)
	j := b.job(t, job.ID)
	if len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptCancelled {
		t.Fatalf("attempts %+v, want the unsent first attempt cancelled", j.Attempts)
	}
	if b.Prov["primary"].Calls() != 0 {
		t.Fatal("a stopping runner sent the attempt")
	}
	// Another replica adopts it and runs it as new: the unsent attempt counts
	// neither as the primary tried nor against max_attempts (1 here).
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Route: race.Route{MaxAttempts: 1},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	j = other.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || j.Attempts[len(j.Attempts)-1].Provider != "primary" {
		t.Fatalf("adopted job %s (%v), attempts %+v: want it won on the primary", j.State, j.Error, j.Attempts)
	}
}

// pauseAtLaunch is an observer that holds the orchestrator the moment it
// launches its nth attempt (1 when zero) — created, not yet sent — until
// released.
type pauseAtLaunch struct {
	nth               int
	launched, release chan struct{}
	mu                sync.Mutex
	seen              int
}

func newPauseAtLaunch(nth int) *pauseAtLaunch {
	return &pauseAtLaunch{nth: max(nth, 1), launched: make(chan struct{}), release: make(chan struct{})}
}

func (p *pauseAtLaunch) AttemptStarted(string, string) {
	p.mu.Lock()
	p.seen++
	hold := p.seen == p.nth
	p.mu.Unlock()
	if hold {
		close(p.launched)
		<-p.release
	}
}
func (*pauseAtLaunch) AttemptFinished(string, string, string, providers.Kind, time.Duration, providers.Usage) {
}
func (*pauseAtLaunch) RaceLost(string)     {}
func (*pauseAtLaunch) HedgeStarted(string) {}
func (*pauseAtLaunch) JobSettled(string)   {}

// A first attempt created before the router began shutting down but not yet
// sent is not sent: it is recorded as never sent and the job is free at once
// for another replica, instead of being cut by the shutdown and left to
// expire as unknown (a request that never left looked like one that might
// have been processed).
func TestAttemptNotYetSentWhenDrainingIsHandedOver(t *testing.T) {
	obs := newPauseAtLaunch(1)
	b := setupObserved(t, race.Route{}, nil, obs, provSpec{name: "primary", respond: ok(validTriage)})
	job := b.submit(t)
	<-obs.launched
	b.runner.Drain(0) // SIGTERM between the attempt's creation and its sending
	close(obs.release)
	b.stop()
	if n := b.Prov["primary"].Calls(); n != 0 {
		t.Fatalf("the draining router sent the attempt (%d calls)", n)
	}
	j := b.job(t, job.ID)
	if j.State != store.JobRunning || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptCancelled {
		t.Fatalf("job %s, attempts %+v: want the job running (not settled) with its unsent attempt cancelled", j.State, j.Attempts)
	}
	if owner := leaseOwner(t, b, job.ID); owner != "" {
		t.Fatalf("the job's lease is still held by %q: another replica must be able to adopt it now", owner)
	}
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Route: race.Route{MaxAttempts: 1},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	if j = other.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("adopted job %s (%v): want it won by the other replica", j.State, j.Error)
	}
}

// A later attempt (here a failover) created but not yet sent when the router
// drains is recorded as never sent without forgetting the attempts before it:
// the replica that adopts the job does not send it again to the provider that
// already answered, and the unsent attempt does not use up max_attempts.
// (Found in review: handing it over like a first attempt moved the job's
// attempt base past the earlier attempts.)
func TestUnsentFailoverKeepsTheAttemptsBeforeIt(t *testing.T) {
	obs := newPauseAtLaunch(2) // the failover
	const invalid = `{"not":"valid"}`
	b := setupObserved(t, race.Route{MaxAttempts: 2}, nil, obs,
		provSpec{name: "primary", respond: ok(invalid)},
		provSpec{name: "fallback", respond: ok(validTriage)})
	job := b.submit(t)
	<-obs.launched
	b.runner.Drain(0)
	close(obs.release)
	b.stop()
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the draining router sent the failover (%d calls)", n)
	}
	j := b.job(t, job.ID)
	if len(j.Attempts) != 2 || !store.NotSent(j.Attempts[1]) || j.State != store.JobRunning {
		t.Fatalf("job %s, attempts %+v: want the failover recorded as not sent and the job left running", j.State, j.Attempts)
	}
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Route: race.Route{MaxAttempts: 2},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(invalid)}, {Name: "fallback", Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	j = other.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || j.Attempts[len(j.Attempts)-1].Provider != "fallback" {
		t.Fatalf("adopted job %s (%v), attempts %+v: want it won on the fallback", j.State, j.Error, j.Attempts)
	}
	if n := other.Prov["primary"].Calls(); n != 0 {
		t.Fatalf("the adopter sent the job again to the primary that had answered (%d calls)", n)
	}
}
