package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A hedge, failover or retry gives up on a job row another transaction holds
// (an operator's open psql transaction, a replica cut off mid-transaction)
// with ErrBusy after a bounded wait, creating nothing, and is created once the
// row is free. Before, CreateAttempt locked the row with no lock_timeout: the
// job's orchestration waited as long as the row was held, its attempts'
// results unread (found in review).
func TestCreateAttemptGivesUpOnAHeldJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _ := b.running(t, "create-held")
	holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

	hedge := store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge, LeaseOwner: "test", MaxInflight: 2, MaxAttempts: 4}
	err := b.whileHeld(t, pid, "CreateAttempt", func(ctx context.Context) error {
		a, err := b.st.CreateAttempt(ctx, hedge)
		if a != nil {
			return fmt.Errorf("CreateAttempt created attempt %s", a.ID)
		}
		return err
	})
	wantJobBusy(t, "CreateAttempt", err, j.ID)
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE job_id = $1`, j.ID); n != 1 {
		t.Fatalf("%d attempts after a creation that gave up, want the first one only", n)
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := b.st.CreateAttempt(ctx, hedge)
	if err != nil || a.Seq != 2 || a.State != store.AttemptStarting {
		t.Fatalf("CreateAttempt once the row is free: %+v, err %v; want attempt 2 starting", a, err)
	}
}

// awaitNotBlockedBy waits until no backend waits for a lock that the backend
// pid holds (a condition, polled). The lock manager says so
// (pg_blocking_pids), not the wait event, which a waiting backend clears each
// time its latch wakes it inside the wait (its deadlock check, a signal).
func (b *bundle) awaitNotBlockedBy(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`, pid) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("something still waited for the locks of backend %d after %s", pid, hangGuard)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The record of an attempt never sent gives up on a job row another
// transaction holds with ErrBusy after one bounded wait, and is not tried
// again: a row held past the store's lock wait is an operator's open
// transaction or a cut-off replica's, which outlasts any budget the stopping
// run has left (and the run's own last writes need the same row). The
// attempt is left in flight, to its lease: when the lease expires recovery
// marks it unknown (lease_expired), as for a process that died.
//
// Pinned: the holder is rolled back as soon as the first wait has given up,
// so a retry would find the row free and succeed.
func TestRecordNotSentGivesUpOnAHeldJobWithoutRetrying(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, a := b.running(t, "unsent-held")
	holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

	got := make(chan error, 1)
	go func() { got <- b.st.RecordNotSent(context.Background(), a.ID, "the request was never sent: test") }()
	b.awaitBlockedBy(t, pid)
	b.awaitNotBlockedBy(t, pid) // its lock wait ran out: the row is still held
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-got:
	case <-time.After(transitionHangGuard):
		t.Fatalf("RecordNotSent did not return within %s", transitionHangGuard)
	}
	wantJobBusy(t, "RecordNotSent", err, j.ID)
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running'`, a.ID); n != 1 {
		t.Fatal("the attempt left flight though its record as not sent gave up")
	}

	// Left to its lease.
	b.exec(t, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, a.ID)
	if done, err := b.st.ExpireAttemptLeases(ctx); err != nil || len(done) != 1 || done[0] != j.ID {
		t.Fatalf("lease expiry: %v, err %v; want the job", done, err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'unknown' AND error->>'kind' = 'lease_expired'`, a.ID); n != 1 {
		t.Fatal("the attempt left to its lease is not unknown (lease_expired) once the lease expired")
	}
}
