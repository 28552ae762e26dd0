package race

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A fresh job whose claim answered late is marked urgent by holdLease, which
// wakes the keeper so that its renewal waits for a held row instead of
// skipping it (store.RenewLeasesWaiting, rdiff57 F1). But when the keeper's
// tick has come while it was busy (its timer and the wake both ready, or the
// tick's pass already under way), the tick's pass takes the urgent job too
// (leasesDue: rj.urgent || ...), clears its mark and renews it with
// RenewLeases, which skips a held row. The woken pass that follows finds no
// urgent job and renews nothing. The job's next renewal is then the next
// tick, after the claim's lease has run out: the attempt in flight on this
// live runner is marked unknown by recovery.
func TestUrgentJobTakenByATickIsRenewedWaiting(t *testing.T) { urgentTickRig(t, true) }

// The control: the same late-claimed job submitted a second before the tick
// (the keeper idle) is renewed by the woken pass, which waits for the row.
func TestUrgentJobWokenBetweenTicksIsRenewed(t *testing.T) { urgentTickRig(t, false) }

func urgentTickRig(t *testing.T, atTick bool) {
	const lease = 6 * time.Second // ticks of 2 s
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	r := New(Config{Store: db.Store, Lease: lease, LeaseOwner: "me"})
	// The keeper's ticks are the test's (keeperTicks), and each of its
	// passes says it ended.
	r.keeperTicks = make(chan time.Time)
	passed := make(chan struct{}, 1)
	r.keeperPassed = func() {
		select {
		case passed <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() {
		r.cancelBase(errShutdown)
		r.keeperWG.Wait()
	})
	// Another job of this runner keeps the keeper ticking.
	r.mu.Lock()
	r.holdLease(store.NewAttemptID(), func(error) {}, time.Now())
	r.mu.Unlock()

	input := []byte(`{"subject":"Login","body":"I cannot log in."}`)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "urgent-tick", PromptVersion: "3", Route: "default",
		Input: input, LeaseOwner: "me", LeaseFor: lease,
		First: &store.FirstAttempt{Provider: "primary", Model: "m", Role: store.RolePrimary}}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", input)
	job, created, err := db.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	att := job.Attempts[0].ID
	// Its claim answered 4.5 s late: the leases it set run out 1.5 s from
	// now, before the keeper's next tick (2 s after the last).
	since := time.Now().Add(-4500 * time.Millisecond)
	for _, q := range []string{`UPDATE jobs SET lease_expires_at = now() + interval '1.5 seconds' WHERE id = $1`,
		`UPDATE attempts SET lease_expires_at = now() + interval '1.5 seconds' WHERE job_id = $1`} {
		if _, err := db.Pool.Exec(ctx, q, job.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Another transaction holds the attempt's row for a moment as the job
	// starts (well within the third of a tick an urgent renewal waits).
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM attempts WHERE id = $1 FOR UPDATE`, att); err != nil {
		t.Fatal(err)
	}
	// The submit of the late-claimed job comes as the tick fires: the keeper
	// has taken its tick, and its pass waits for r.mu while holdLease runs
	// (as submit calls it). In the control the keeper is idle between ticks.
	r.mu.Lock()
	if atTick {
		r.keeperTicks <- time.Now()
	}
	r.holdLease(job.ID, func(error) {}, since)
	if !r.running[job.ID].urgent {
		r.mu.Unlock()
		t.Fatal("the late-claimed job was not marked urgent: the rig is wrong")
	}
	r.mu.Unlock()
	// The row is released once the keeper's renewal waits for it — or once a
	// pass ended without waiting (it skipped the row).
	wctx, cancel := context.WithCancel(ctx)
	waiter := make(chan error, 1)
	go func() { waiter <- waitForRowWaiter(wctx, db, tx.Conn().PgConn().PID()) }()
	select {
	case err := <-waiter:
		if err != nil {
			t.Fatal(err)
		}
	case <-passed:
	}
	cancel()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Just past the claim's lease.
	state, kind := attemptPastClaimLease(t, db, att)
	if state != store.AttemptRunning {
		t.Fatalf("the first attempt of a job this live runner holds is %s (%s): its urgent mark was taken by the keeper's tick, "+
			"whose renewal skipped the row held for a moment, and the woken pass after it renewed nothing; the next tick came after "+
			"the claim's lease had run out", state, kind)
	}
}

// waitForRowWaiter returns once a statement waits for a lock that session
// holder holds (the database's lock table says so), or ctx ends.
func waitForRowWaiter(ctx context.Context, db *testdb.DB, holder uint32) error {
	_, err := db.Pool.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN
		WHILE NOT EXISTS (SELECT FROM pg_stat_activity WHERE %d = ANY(pg_blocking_pids(pid))) LOOP
			PERFORM pg_sleep(0.005);
		END LOOP; END $$`, holder))
	if ctx.Err() != nil {
		return nil
	}
	return err
}
