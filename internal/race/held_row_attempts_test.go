package race_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// createAttemptLock is in the text of the statement with which
// store.CreateAttempt locks the job's row: awaitGaveUp tells its lock wait
// from the others' (a lease renewal, a settlement).
const createAttemptLock = "attempt_base, lease_owner FROM jobs"

// holdRows locks the rows that q (a SELECT … FOR UPDATE) selects in a
// transaction of its own, as an operator's transaction left open in psql
// does. It returns the holder's backend pid and a func that rolls it back
// (idempotent, and run at cleanup).
func holdRows(t *testing.T, b *bundle, q string, args ...any) (pid int, release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
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
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if tag, err := tx.Exec(ctx, q, args...); err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("hold %q: %v (%d rows)", q, err, tag.RowsAffected())
	}
	return pid, release
}

// awaitGaveUp waits until a statement whose text contains marker has waited
// for a lock that backend pid holds, and then stopped waiting while the lock
// is still held: its lock wait ran out (conditions, polled). A statement that
// waits for as long as the lock is held never stops: the test fails after
// hangBound.
//
// That it still waits is the lock manager's word (pg_blocking_pids), not the
// wait event the backend reports: the wait event is cleared each time the
// waiting backend's latch wakes it inside its lock wait — its deadlock check
// after deadlock_timeout, a catch-up or other signal — and set again when it
// goes back to waiting. Under load a poll could land in that gap and take a
// statement that still waited for one that gave up; the test then released
// the row, the statement took it, and the failover it was meant to stop ran
// (the run won the job and never ended as a run left to its lease).
//
// The statement is named by its backend and its start (query_start), read by
// a poll of its own once the statement was seen waiting. A row of
// pg_stat_activity is not one moment: its query, query_start and state are
// the backend's status as of the poll's first look at the view (a copy kept
// for the poll's transaction), its wait_event and pg_blocking_pids(pid) are
// live, read as the row is formed. The statement's first run on a connection
// is prepared first (pgx's statement cache: a Parse in a round trip of its
// own, which sets query_start too), so a poll that copied the status during
// that preparation and saw the wait that the statement's execution began
// meanwhile named the statement by its preparation's start; the next poll
// found nothing with that start waiting and took the statement that still
// waited for one that had given up — the same false give-up as above. A
// later poll's copy is taken after the wait was seen, so after the execution
// (its query_start) began.
func awaitGaveUp(t *testing.T, b *bundle, pid int, marker string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(hangBound)
	var waiter int
	for {
		err := b.db.Pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid)) AND strpos(query, $2) > 0
			LIMIT 1`, pid, marker).Scan(&waiter)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no statement with %q ever waited for the locks of backend %d (%v)", marker, pid, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var since time.Time
	err := b.db.Pool.QueryRow(ctx, `SELECT query_start FROM pg_stat_activity
		WHERE pid = $1 AND $2 = ANY (pg_blocking_pids(pid)) AND strpos(query, $3) > 0`, waiter, pid, marker).Scan(&since)
	if errors.Is(err, pgx.ErrNoRows) {
		return // it no longer waits, and the lock is still held: it gave up already
	}
	if err != nil {
		t.Fatal(err)
	}
	for {
		var waiting bool
		if err := b.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE pid = $1 AND query_start = $2 AND $3 = ANY (pg_blocking_pids(pid)))`, waiter, since, pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if !waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the statement with %q still waited for the locks of backend %d after %s", marker, pid, hangBound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A hedge due while another transaction holds the job's row (an operator's
// psql transaction left open) used to wait for the row as long as it was
// held, with the whole orchestration behind it: CreateAttempt locked the row
// with no lock_timeout. It gives up after a bounded wait (ErrBusy), and the
// race goes on with the attempt in flight: the hedge is tried again later,
// and a failure of the attempt in flight fails over as usual. The job is not
// failed for an attempt that could not start. Found in review.
func TestHedgeOnAHeldJobRowGivesUpAndTheRaceGoesOn(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	b := setup(t, race.Route{HedgeAfter: 20 * time.Millisecond},
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(called)
				<-release
			}
			return providers.Step{Status: 500}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	// Nothing of the job's run before its hedge needs the job's row: the
	// first attempt was created with the job.
	pid, unhold := holdRows(t, b, `SELECT FROM jobs WHERE id = $1 FOR UPDATE`, job.ID)
	<-called
	awaitGaveUp(t, b, pid, createAttemptLock) // the hedge could not start
	unhold()
	close(release) // the primary fails; the race fails over, or the hedge tried again wins first

	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%s), want it succeeded on the fallback: a hedge that could not start is no reason to stop the race",
			j.State, derefString(j.Error))
	}
	if fb := attemptBy(j, "fallback"); fb == nil || j.CompletedBy == nil || *j.CompletedBy != fb.ID {
		t.Fatalf("attempts %+v, completed by %v: want the fallback's attempt to win", j.Attempts, j.CompletedBy)
	}
}

// A failover due while another transaction holds the job's row, with nothing
// in flight, gives up after a bounded wait and leaves the job to its lease:
// not settled (it used to be failed, "could not create an attempt", once the
// row was free for the settlement; before the lock wait was bounded, the run
// waited as long as the row was held). Recovery adopts the job once its lease
// has expired or been released, and the race goes on where it stopped.
func TestFailoverOnAHeldJobRowLeavesTheJobToItsLease(t *testing.T) {
	obs := newHoldFinished(1) // holds the primary's end until the row is held
	b := setupObserved(t, race.Route{}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	changed, unsubscribe := b.listener.Subscribe(job.ID)
	defer unsubscribe()
	<-obs.held // the primary's failure is recorded; the orchestration has not seen it yet
	pid, unhold := holdRows(t, b, `SELECT FROM jobs WHERE id = $1 FOR UPDATE`, job.ID)
	close(obs.release)
	awaitGaveUp(t, b, pid, createAttemptLock) // the failover could not start
	unhold()                                  // free for whatever the run does next
	waitRunEnded(t, b, changed, job.ID)

	j := b.job(t, job.ID)
	if j.State != store.JobRunning {
		t.Fatalf("job %s (%s) after its failover could not start, want running: left to its lease", j.State, derefString(j.Error))
	}
	if len(j.Attempts) != 1 || b.prov["fallback"].Calls() != 0 {
		t.Fatalf("attempts %+v, fallback called %d times; want only the primary's", j.Attempts, b.prov["fallback"].Calls())
	}

	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	b.runner.RecoverOnce(ctx, 10)
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("after recovery the job is %s (%s), want succeeded on the fallback", j.State, derefString(j.Error))
	}
	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want once: the adopted race goes on with the fallback", n)
	}
}

// A definitive failure that arrives after recovery marked its attempt
// unknown is recorded by resolving the attempt (finishAttempt, after the
// state conflict). With the attempt's row held by another transaction, that
// resolution used to wait as long as it was held — no lock_timeout, on a
// context nothing cancels — and the job's run with it. It gives up after a
// bounded wait: the attempt stays unknown, as if the answer had never come,
// and reconciliation resolves it later.
func TestLateFailureOnAHeldRowGivesUp(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(called)
				<-release
				return providers.Step{Status: 500}
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	ctx := context.Background()
	job := b.submit(t)
	changed, unsubscribe := b.listener.Subscribe(job.ID)
	defer unsubscribe()
	<-called
	// The attempt's lease expires while its call still runs (its owner
	// cleared so the lease keeper cannot renew it first).
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second', lease_owner = NULL
		WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	// The attempt's row, not the job's: FinishAttempt (which locks the job's
	// row) finds the attempt unknown without waiting, and the resolution
	// after it waits for the attempt's row.
	pid, unhold := holdRows(t, b, `SELECT FROM attempts WHERE job_id = $1 FOR UPDATE`, job.ID)
	close(release) // the definitive failure arrives only now
	awaitGaveUp(t, b, pid, "FROM attempts WHERE job_id = $1 AND seq = $2 FOR UPDATE")
	waitRunEnded(t, b, changed, job.ID)
	unhold()

	j := b.job(t, job.ID)
	if p := attemptBy(j, "primary"); j.State != store.JobUnknown || p.State != store.AttemptUnknown {
		t.Fatalf("job %s, primary %s after the late failure's resolution gave up; want both unknown (the answer unrecorded)", j.State, p.State)
	}
	// Reconciliation resolves it once the row is free (the scripted provider
	// has no record of a failed call), and the race goes on.
	b.runner.RecoverOnce(ctx, 10)
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("after reconciliation the job is %s (%s), want succeeded", j.State, derefString(j.Error))
	}
}
