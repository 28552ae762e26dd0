package race_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// stallUnrenewed stalls the orchestrator's goroutine (it runs in the
// AttemptStarted hook, after the attempt's running mark and before its
// send) until the attempt just launched has outlived its lease, while no
// renewal of it can be noted: it holds the attempt's row (the lease keeper
// skips held rows) and waits in the database until the lease the mark set
// (or a renewal before the hold) has run out on the database's clock. The
// send fence then refuses the attempt. The row is held until the attempt's
// next write (its record as never sent) waits for it, so that no renewal
// lands between the stall and the fence's check; wg is done once it is let
// go. It returns the attempt's id.
func stallUnrenewed(t *testing.T, b *racetest.Bundle, wg *sync.WaitGroup) string {
	ctx := context.Background()
	tx, err := b.DB.Pool.Begin(ctx)
	if err != nil {
		t.Error(err)
		return ""
	}
	var id string
	var pid int
	if err := tx.QueryRow(ctx, `SELECT id::text, pg_backend_pid() FROM attempts WHERE state = 'running'
		ORDER BY seq DESC LIMIT 1 FOR UPDATE`).Scan(&id, &pid); err != nil {
		t.Error(err)
		_ = tx.Rollback(ctx)
		return ""
	}
	if _, err := tx.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM lease_expires_at - clock_timestamp())) + 0.001)
		FROM attempts WHERE id = $1`, id); err != nil {
		t.Error(err)
		_ = tx.Rollback(ctx)
		return id
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer tx.Rollback(ctx)
		for deadline := time.Now().Add(hangBound); ; time.Sleep(5 * time.Millisecond) { // a poll's pace
			var waiting bool
			if err := b.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid)))`,
				pid).Scan(&waiting); err != nil {
				t.Error(err)
				return
			}
			if waiting {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("no write of attempt %s waited for its row within %s", id, hangBound)
				return
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Error(err)
		}
	}()
	return id
}

// waitRunOver waits until the runner no longer runs the job, which it
// announces (Listener.Publish); a run that finished the job fails the test:
// the tests using it expect the job left unsettled.
func waitRunOver(t *testing.T, b *racetest.Bundle, changed <-chan string, jobID string) {
	t.Helper()
	timeout := time.After(hangBound)
	for b.Runner.Runs(jobID) {
		select {
		case state := <-changed:
			if store.IsTerminal(state) {
				j := b.Job(t, jobID)
				t.Fatalf("the job's run finished it (%s: %s), attempts %s: want it left unsettled", state, derefString(j.Error), attemptsOf(j))
			}
		case <-timeout:
			t.Fatalf("the job's run did not end within %s", hangBound)
		}
	}
}

// A persistently slow router (here every running mark, as a database slower
// than nine tenths of execution.lease would make it) had every attempt kept
// from being sent by the send fence, recorded not_sent — which counts
// neither as its target tried nor against max_attempts — and started again
// at once on the same target: never-sent attempts without end (until the
// job's deadline; this route has none). The run now starts no more after
// maxFencedPerRun (3) of them and leaves the job to its lease, unsettled (as
// a race that could not start an attempt on a held row does), for recovery
// to run again. Found by review.
//
// Without the cap the test ends all the same: only the first five attempts
// are stalled, and the sixth is sent and wins.
func TestSendFenceRefusalsPerRunAreCapped(t *testing.T) {
	var b *racetest.Bundle
	var wg sync.WaitGroup
	var stalls atomic.Int32
	hook := &launchHook{onStart: func(string) {
		if stalls.Add(1) <= 5 {
			stallUnrenewed(t, b, &wg)
		}
	}}
	b = racetest.New(t, racetest.Options{Lease: fenceLease, Observer: hook,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	job, plan := planAndClaim(t, b, "fence-cap", nil) // the job's leases are the runner's (fenceLease)
	b.Runner.SubmitNew(job, plan)
	changed, unsubscribe := b.Listener.Subscribe(job.ID)
	defer unsubscribe()
	waitRunOver(t, b, changed, job.ID)
	wg.Wait()
	b.Stop()
	j := b.Job(t, job.ID)
	if store.IsTerminal(j.State) || j.State == store.JobUnknown {
		t.Fatalf("job %s (%s), attempts %s: want it left to its lease, unsettled", j.State, derefString(j.Error), attemptsOf(j))
	}
	if len(j.Attempts) != 3 {
		t.Fatalf("%d attempts (%s): want the run to stop after 3 kept from being sent", len(j.Attempts), attemptsOf(j))
	}
	for _, a := range j.Attempts {
		if !store.NotSent(a) {
			t.Fatalf("attempt %s is %s (%s): want it recorded as never sent", a.ID, a.State, a.Error)
		}
	}
	if n := b.Prov["primary"].Calls(); n != 0 {
		t.Fatalf("%d provider calls, want none", n)
	}
}

// A drain that began after a retry's run checked for it (runAttempt), while
// the send fence kept the retry from being sent: the fence's handling found
// that no retry could start (canStart: draining) and dropped it, without
// noting that work was left for another replica (leftOver). The target was
// used, nothing else was left to try, so the job was settled failed, its
// retry never tried, instead of being handed over. The retry kept from being
// sent is now left over, as one the drain kept from being sent is. Found by
// review.
func TestFencedRetryDuringDrainIsHandedOver(t *testing.T) {
	var b *racetest.Bundle
	var wg sync.WaitGroup
	var stallOnce, drainOnce sync.Once
	hook := &launchHook{
		onStart: func(role string) {
			if role == store.RoleRetry {
				stallOnce.Do(func() { stallUnrenewed(t, b, &wg) })
			}
		},
		onFinish: func(role, state string) {
			if role == store.RoleRetry && state == "unsent" {
				// After the run's drain check, before the race hears of it.
				drainOnce.Do(func() { b.Runner.Drain(time.Minute) })
			}
		},
	}
	b = racetest.New(t, racetest.Options{Lease: fenceLease, Observer: hook,
		Providers: []racetest.Provider{{Name: "primary", MaxRetries: 1, Respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 503}
			}
			return providers.Step{Output: validTriage}
		}}}})
	job, plan := planAndClaim(t, b, "fence-drain", nil) // the job's leases are the runner's (fenceLease)
	b.Runner.SubmitNew(job, plan)
	changed, unsubscribe := b.Listener.Subscribe(job.ID)
	defer unsubscribe()
	waitRunOver(t, b, changed, job.ID)
	wg.Wait()
	b.Stop()
	j := b.Job(t, job.ID)
	if store.IsTerminal(j.State) || j.State == store.JobUnknown {
		t.Fatalf("job %s (%s), attempts %s: want it handed over, unsettled", j.State, derefString(j.Error), attemptsOf(j))
	}
	var fenced int
	for _, a := range j.Attempts {
		if a.Role == store.RoleRetry && store.NotSent(a) {
			fenced++
		}
	}
	if fenced != 1 || b.Prov["primary"].Calls() != 1 {
		t.Fatalf("attempts %s, %d calls: want the primary's call and its retry kept from being sent", attemptsOf(j), b.Prov["primary"].Calls())
	}
}
