package race_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// holdAdmission holds the admission of one provider — the moment an
// orchestrator is about to create an attempt on it — until released, then
// answers admit; every other provider is admitted at once.
type holdAdmission struct {
	provider         string
	admit            bool
	reached, release chan struct{}
	once             sync.Once
}

// open releases the held admission (again: a no-op).
func (h *holdAdmission) open() { h.once.Do(func() { close(h.release) }) }

func newHoldAdmission(provider string, admit bool) *holdAdmission {
	return &holdAdmission{provider: provider, admit: admit, reached: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdAdmission) Admit(p string) (func(race.Outcome), bool, string) {
	if p == h.provider {
		close(h.reached) // once: a second admission of it would panic the test
		<-h.release
		if !h.admit {
			return nil, false, "breaker open"
		}
	}
	return func(race.Outcome) {}, true, ""
}

// SPEC §6.8, §6.9: a replica whose orchestration lease on a job expired
// (it stalled) and was taken over by another replica must not settle the job
// under the new owner. Here replica A, between attempts, stalls while its
// lease expires; replica B adopts the job and is about to start the fallback;
// A then finds nothing more to try (the fallback's breaker is open in A) and
// ends its orchestration. The job must be left to B, which wins it on the
// fallback — not failed by A with nothing in flight.
func TestStaleOrchestratorDoesNotSettleAdoptedJob(t *testing.T) {
	const invalid = `{"not":"valid"}`
	holdA := newHoldAdmission("fallback", false)
	a := racetest.New(t, racetest.Options{LeaseOwner: "replica-a", Lease: time.Hour, Admission: holdA,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(invalid)}, {Name: "fallback", Respond: racetest.OK(validTriage)}}})
	holdB := newHoldAdmission("fallback", true)
	b := racetest.New(t, racetest.Options{DB: a.DB, LeaseOwner: "replica-b", Lease: time.Hour, Admission: holdB,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(invalid)}, {Name: "fallback", Respond: racetest.OK(validTriage)}}})
	t.Cleanup(holdA.open) // before the runners stop, should the test end early
	t.Cleanup(holdB.open)
	ctx := context.Background()

	job := a.Submit(t) // the primary's answer is invalid: A fails over to the fallback
	<-holdA.reached    // A stalls, about to create the fallback's attempt
	// A's lease expires (with a lease of an hour, A's keeper has not renewed it).
	if _, err := a.DB.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	b.Runner.RecoverOnce(ctx, 10) // B adopts the job: nothing in flight, lease expired
	<-holdB.reached               // B is about to create the fallback's attempt
	holdA.open()                  // A wakes up: the fallback is refused, nothing is left to try here
	a.Stop()                      // A's orchestration has ended
	if j := a.Job(t, job.ID); j.State != store.JobRunning {
		t.Fatalf("the stale orchestrator settled the job B runs: %s (%v)", j.State, derefString(j.Error))
	}
	holdB.open()
	j := b.WaitSettled(t, job.ID)
	fb := racetest.AttemptOn(j, "fallback")
	if j.State != store.JobSucceeded || fb == nil || j.CompletedBy == nil || *j.CompletedBy != fb.ID {
		t.Fatalf("job %s (%v), attempts %+v: want it won by B on the fallback", j.State, derefString(j.Error), j.Attempts)
	}
	if n := b.Prov["fallback"].Calls(); n != 1 || a.Prov["fallback"].Calls() != 0 {
		t.Fatalf("fallback calls: A %d, B %d; want B's only", a.Prov["fallback"].Calls(), n)
	}
	if j.Error != nil && strings.Contains(*j.Error, "breaker open") {
		t.Fatalf("job carries A's reason: %s", *j.Error)
	}
}
