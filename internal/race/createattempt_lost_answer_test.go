package race_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt's creation is bounded (exitContext) and cut by Stop's hard
// cancel: either may cut it while its COMMIT is in flight, and PostgreSQL
// may commit all the same. The run, told of an error that is none of the
// store's outcomes, knew nothing of the attempt: it stayed `starting` until
// its lease expired, then recovery made it `unknown`, blocking the job for
// a request never sent. The run names the attempt before creating it and,
// after such an error, records it as never sent if it exists. Found by
// review.
//
// The lost answer is simulated by the store's hook: the creation commits,
// and its caller is told an error as if its context had been cut.
func TestAttemptCreatedDespiteItsErrorIsRecordedNotSent(t *testing.T) {
	b := racetest.New(t, racetest.Options{
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	var once sync.Once
	told := make(chan struct{})
	var created *store.Attempt // written before told is closed
	b.Store.SetAfterCreateAttempt(func(a *store.Attempt) error {
		var err error
		once.Do(func() {
			created = a
			err = fmt.Errorf("test: the creation's answer was lost: %w", context.DeadlineExceeded)
			close(told)
		})
		return err
	})
	job := b.SubmitUnplanned(t) // its only attempt is created by its run (start)
	<-told
	// A Stop whose context never ends cuts nothing: it waits for the run to
	// end on its own, after the error it was told.
	b.Runner.Stop(context.Background())
	j := b.Job(t, job.ID)
	if len(j.Attempts) != 1 || j.Attempts[0].ID != created.ID {
		t.Fatalf("attempts %s: want only the one whose creation's answer was lost (%s)", attemptsOf(j), created.ID)
	}
	if a := j.Attempts[0]; a.State != store.AttemptCancelled || !store.NotSent(a) {
		t.Fatalf("the attempt is %s (%s): want it cancelled as never sent (kind not_sent), not left `starting` to become unknown",
			a.State, a.Error)
	}
	if n := b.Prov["primary"].Calls(); n != 0 {
		t.Fatalf("the primary was called %d times for an attempt whose creation failed", n)
	}
	// The run stopped on the error, as before; the job ends rather than
	// waiting, blocked, for an attempt's lease.
	if j.State != store.JobFailed {
		t.Fatalf("job %s (%v): want it failed by its run, nothing left in flight", j.State, derefString(j.Error))
	}
}
