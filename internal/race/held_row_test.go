package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// hangBound only detects a hang: the behaviour under test ends within
// seconds, and a machine that is merely slow stays far within it.
const hangBound = 60 * time.Second

// holdJobRow locks the job's row in a transaction of its own, as an
// operator's transaction left open in psql does; the returned func rolls it
// back (idempotent, and run at cleanup — before the bundle stops when called
// after setup).
func holdJobRow(t *testing.T, b *bundle, jobID string) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT FROM jobs WHERE id = $1 FOR UPDATE`, jobID); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback(ctx)
		}
	}
	t.Cleanup(release)
	return release
}

// waitRunEnded waits until the runner no longer runs the job: it announces
// the end of a run it did not finish (Listener.Publish without a state),
// after the job has left Runs. A run that finished the job (won or settled it
// for good) announces that state instead, before it leaves Runs, and nothing
// after: its callers all expect the job left unsettled, so such a state fails
// the test at once rather than as a wait that could only time out.
func waitRunEnded(t *testing.T, b *bundle, changed <-chan string, jobID string) {
	t.Helper()
	timeout := time.After(hangBound)
	for b.runner.Runs(jobID) {
		select {
		case state := <-changed:
			if store.IsTerminal(state) {
				t.Fatalf("the job's run finished it (%s) while it should have been left to its lease", state)
			}
		case <-timeout:
			t.Fatalf("the job's run did not end within %s while another transaction held its row", hangBound)
		}
	}
}

// A job's run that ends while another transaction holds the job's row (an
// operator's psql transaction left open) used to wait for it for as long as it
// was held: its settlement and the release of its lease waited on the row
// with no bound, and the lease keeper went on renewing the lease of a run
// that could do nothing, so no other replica could take the job over. The
// writes that end a run are bounded: the run ends, the job is left to its
// lease, and recovery takes it over once it expires. Found by review.
func TestJobRunEndsWhileAnotherTransactionHoldsItsRow(t *testing.T) {
	called := make(chan struct{})
	release := make(chan struct{})
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
		if call == 1 {
			close(called)
			<-release
		}
		return providers.Step{Output: validTriage}
	}})
	job := b.submit(t)
	changed, unsubscribe := b.listener.Subscribe(job.ID)
	defer unsubscribe()
	<-called
	unhold := holdJobRow(t, b, job.ID)
	close(release) // the answer comes; its win, then the job's settlement, wait on the held row
	waitRunEnded(t, b, changed, job.ID)
	unhold()

	// Left to its lease: unsettled, its answer unrecorded (the win could not
	// take the row). Once the leases expire, recovery takes the job over and
	// the provider's lookup finds the answer.
	if j := b.job(t, job.ID); j.State != store.JobRunning {
		t.Fatalf("job %s after its run gave up on the held row, want running (left to its lease)", j.State)
	}
	// The leases are expired by hand and recovery runs, until recovery has
	// taken the attempt over (it is no longer running): a renewal the lease
	// keeper took the job's id for before the run ended may still land after
	// an expiry and put the leases ahead again (the run no longer renews
	// them after it, so a later round's expiry holds).
	ctx := context.Background()
	for round := 0; ; round++ {
		if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, job.ID); err != nil {
			t.Fatal(err)
		}
		b.runner.RecoverOnce(ctx, 10)
		var running bool
		if err := b.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM attempts WHERE job_id = $1 AND state = 'running')`, job.ID).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if !running {
			break
		}
		if round == 100 {
			t.Fatalf("recovery did not take over the job's running attempt in %d rounds of expired leases", round+1)
		}
	}
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("after recovery the job is %s (attempts %+v), want succeeded from the provider's record of the answer", j.State, j.Attempts)
	}
}

// Runner.Stop (a second SIGTERM: StopNow) used to wait without limit for every
// job run after cutting the attempts in flight: an attempt whose end waits on
// a job row another transaction holds kept the process from stopping. Stop
// waits StopGrace, then cancels the runs' writes and returns; the job is left
// to its lease, and another replica's recovery takes it over. Found by review.
func TestStopReturnsWhileAnotherTransactionHoldsAJobRow(t *testing.T) {
	called := make(chan struct{})
	release := make(chan struct{})
	rb := racetest.New(t, racetest.Options{StopGrace: time.Second, Providers: []racetest.Provider{{Name: "primary",
		Respond: func(int, *providers.Request) providers.Step {
			close(called)
			<-release
			return providers.Step{Status: 503} // its end is recorded under the job's row lock
		}}}})
	b := &bundle{Bundle: rb, db: rb.DB, st: rb.Store, runner: rb.Runner, listener: rb.Listener, prov: rb.Prov}
	job := b.submit(t)
	<-called
	unhold := holdJobRow(t, b, job.ID)
	close(release)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		stopNow(b)
	}()
	select {
	case <-stopped:
	case <-time.After(hangBound):
		t.Fatalf("Runner.Stop did not return within %s while another transaction held a running job's row", hangBound)
	}
	unhold()
	if j := b.job(t, job.ID); j.State != store.JobRunning {
		t.Fatalf("job %s after the stop, want running: left to its lease", j.State)
	}
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Providers: []racetest.Provider{
		{Name: "primary", Adapter: noLookup{providers.NewScripted(providers.ScriptedConfig{Name: "primary", Respond: racetest.OK(validTriage)})}}}})
	other.Runner.RecoverOnce(ctx, 10)
	if j := other.WaitSettled(t, job.ID); j.State == store.JobRunning || j.State == store.JobPending {
		t.Fatalf("job %s after another replica's recovery", j.State)
	}
}
