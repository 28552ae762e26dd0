package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A run that stalled (a freeze, a CPU stall, a partition) between creating
// an attempt and sending it, for longer than the attempt's lease, found the
// attempt `unknown` when it woke: recovery had marked it so (lease_expired),
// and the job with it. The run knew the request had never left — the
// attempt could not be marked running — but recorded nothing: the job stayed
// unknown, for reconciliation or an operator (for ever on a provider
// without a lookup), for a request no provider ever received. The run now
// records the attempt as never sent, which gives the job back, and runs it
// again. Found by review.
//
// The stall is simulated by the store's hook: once the attempt is created,
// its lease is moved into the past and recovery's expiry runs, before the
// run marks it running.
func TestRunStalledPastItsLeaseBeforeSendingRunsTheJobAgain(t *testing.T) {
	called := make(chan struct{})
	var calledOnce sync.Once
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage),
		OnCall: func(int, *providers.Request) { calledOnce.Do(func() { close(called) }) }}}})
	var once sync.Once
	expired := make(chan string, 1)
	b.Store.SetAfterCreateAttempt(func(a *store.Attempt) error {
		once.Do(func() {
			ctx := context.Background()
			if _, err := b.DB.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, a.ID); err != nil {
				t.Error(err)
			}
			if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
				t.Error(err)
			}
			expired <- a.ID
		})
		return nil
	})
	job := b.SubmitUnplanned(t) // its first attempt is created by its run (start)
	var stalled string
	select {
	case stalled = <-expired:
	case <-time.After(hangBound):
		t.Fatal("the job's run created no attempt")
	}
	// Run again, the job's next attempt is the one its provider receives:
	// only then is the job settled for good (a read before it could see the
	// unknown state recovery gave it for a moment).
	select {
	case <-called:
	case <-time.After(hangBound):
		j := b.Job(t, job.ID)
		t.Fatalf("the job was not run again: its attempt, never sent, left it %s; attempts %s", j.State, attemptsOf(j))
	}
	j := b.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v), attempts %s: want it run again and succeeded", j.State, derefString(j.Error), attemptsOf(j))
	}
	a := attemptByID(t, j, stalled)
	if a.State != store.AttemptCancelled || !store.NotSent(*a) {
		t.Fatalf("the stalled attempt is %s (%s): want it cancelled as never sent", a.State, a.Error)
	}
	if n := b.Prov["primary"].CallsFor(stalled); n != 0 {
		t.Fatalf("the stalled attempt was sent %d times", n)
	}
	if n := b.Prov["primary"].Calls(); n != 1 {
		t.Fatalf("the primary was called %d times: want once, by the job's next attempt", n)
	}
}

// attemptByID is the job's attempt id, or fails the test.
func attemptByID(t *testing.T, j *store.Job, id string) *store.Attempt {
	t.Helper()
	for i := range j.Attempts {
		if j.Attempts[i].ID == id {
			return &j.Attempts[i]
		}
	}
	t.Fatalf("job %s has no attempt %s: attempts %s", j.ID, id, attemptsOf(j))
	return nil
}
