package race_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
	// The target was not tried: its start is tried once more at once
	// (startFailed), and that attempt is sent and wins.
	j := waitJobSettled(t, b.Runner, b.Store, job.ID)
	if len(j.Attempts) != 2 || j.Attempts[0].ID != created.ID {
		t.Fatalf("attempts %s: want the one whose creation's answer was lost (%s), then the one tried again", attemptsOf(j), created.ID)
	}
	if a := j.Attempts[0]; a.State != store.AttemptCancelled || !store.NotSent(a) {
		t.Fatalf("the attempt is %s (%s): want it cancelled as never sent (kind not_sent), not left `starting` to become unknown",
			a.State, a.Error)
	}
	if n := b.Prov["primary"].Calls(); n != 1 {
		t.Fatalf("the primary was called %d times: want once, for the attempt tried again", n)
	}
	// Its target was not tried, so the job is not failed for it (it used to
	// be: the run stopped on the error, "could not create an attempt").
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v): want it succeeded by the attempt tried again", j.State, derefString(j.Error))
	}
}

// waitJobSettled waits for the runner to end job id's run and returns the
// job as it then is.
func waitJobSettled(t *testing.T, r interface{ Runs(string) bool }, st *store.Store, id string) *store.Job {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for {
		j, err := st.GetJobAny(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != store.JobPending && j.State != store.JobRunning && !r.Runs(id) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never settled: %s", j.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
