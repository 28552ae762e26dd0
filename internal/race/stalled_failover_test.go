package race_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// waitEnded waits, on the job's notifications, until the job is terminal
// (succeeded, failed or cancelled), and returns it: unlike WaitSettled it
// goes on past an `unknown` state, which recovery's expiry gives a job for
// a moment in these tests.
func waitEnded(t *testing.T, b *racetest.Bundle, id string) *store.Job {
	t.Helper()
	changed, unsubscribe := b.Listener.Subscribe(id)
	defer unsubscribe()
	timeout := time.After(hangBound)
	for {
		j := b.Job(t, id)
		if store.IsTerminal(j.State) {
			return j
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("job %s did not end; attempts %s", j.State, attemptsOf(j))
		}
	}
}

// A run stalled past its lease after creating a failover and before sending
// it: recovery marked the failover unknown (lease_expired), and the run, when
// it woke, recorded it as never sent (RecordNotSentExpired), which resumed
// the job. That record moved the job's attempt_base past the failover, so
// the resumed race no longer counted the attempts before it: it sent the
// request again to the primary, which had already answered (an invalid
// answer), and made three provider calls on max_attempts 2 (SPEC §6.4).
// An attempt never sent is excluded from both by its kind (not_sent), so the
// base no longer moves. Found by review; TestUnsentFailoverKeepsTheAttemptsBeforeIt
// is the same on the drain's path.
func TestStalledFailoverKeepsTheAttemptsBeforeIt(t *testing.T) {
	const invalid = `{"not":"valid"}`
	b := racetest.New(t, racetest.Options{Route: race.Route{MaxAttempts: 2},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(invalid)},
			{Name: "fallback", Respond: racetest.OK(validTriage)}}})
	var created atomic.Int32
	var once sync.Once
	expired := make(chan string, 1)
	b.Store.SetAfterCreateAttempt(func(a *store.Attempt) error {
		if created.Add(1) != 2 { // the failover (the primary's attempt is the first)
			return nil
		}
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
	job := b.SubmitUnplanned(t)
	var stalled string
	select {
	case stalled = <-expired:
	case <-time.After(hangBound):
		t.Fatal("the job's run created no failover")
	}
	j := waitEnded(t, b, job.ID)
	b.Stop() // every run of the job has ended: no call is still to come
	if a := attemptByID(t, j, stalled); !store.NotSent(*a) {
		t.Fatalf("the stalled failover is %s (%s): want it cancelled as never sent", a.State, a.Error)
	}
	if n := b.Prov["primary"].Calls(); n != 1 {
		t.Errorf("the primary, which had already answered (invalid), was called %d times: want once; attempts %s", n, attemptsOf(j))
	}
	sent := 0
	for _, a := range j.Attempts {
		if !store.NotSent(a) {
			sent++
		}
	}
	if sent > 2 {
		t.Errorf("%d attempts were sent with max_attempts 2; attempts %s", sent, attemptsOf(j))
	}
	if j.State != store.JobSucceeded || j.Attempts[len(j.Attempts)-1].Provider != "fallback" {
		t.Errorf("job %s (%s): want it won on the fallback; attempts %s", j.State, derefString(j.Error), attemptsOf(j))
	}
}
