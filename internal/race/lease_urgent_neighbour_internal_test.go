package race

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Late claims come in batches (one claim statement answers for many jobs),
// so several jobs are marked urgent at once and renewUrgent renews them in
// one statement that waits for every row. When one of them (A) has a row
// another transaction holds past the urgent budget (an operator's psql, a
// replica cut off mid-transaction), that statement fails for all of them.
// Job B, whose rows nobody holds, must still be renewed before its claim's
// lease runs out (the keeper renews them at once skipping held rows), not
// left to the next tick, which comes after it: B's attempt, in flight on
// this live runner, would be marked unknown by recovery (rdiff58 F1).
func TestUrgentRenewalOfOneJobNotHeldBackByAnothersHeldRow(t *testing.T) {
	const lease = 6 * time.Second // ticks of 2 s; an urgent renewal is given 667 ms
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	r := New(Config{Store: db.Store, Lease: lease, LeaseOwner: "me"})
	t.Cleanup(func() {
		r.cancelBase(errShutdown)
		r.keeperWG.Wait()
	})
	input := []byte(`{"subject":"Login","body":"I cannot log in."}`)
	mk := func(key string) *store.Job {
		nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: key, PromptVersion: "3", Route: "default",
			Input: input, LeaseOwner: "me", LeaseFor: lease,
			First: &store.FirstAttempt{Provider: "primary", Model: "m", Role: store.RolePrimary}}
		nj.Fingerprint, _ = store.Fingerprint("triage", "", "", input)
		job, created, err := db.Store.CreateJob(ctx, nj)
		if err != nil || !created {
			t.Fatalf("create: %v created=%v", err, created)
		}
		return job
	}
	a, b := mk("urgent-neighbour-a"), mk("urgent-neighbour-b")
	// Both claims answered 4.5 s late (one batch): B's leases run out 1.5 s
	// from now, before the keeper's first tick (2 s after the submit). A's
	// are left long, so that only B's matter below.
	for _, q := range []string{`UPDATE jobs SET lease_expires_at = now() + interval '1.5 seconds' WHERE id = $1`,
		`UPDATE attempts SET lease_expires_at = now() + interval '1.5 seconds' WHERE job_id = $1`} {
		if _, err := db.Pool.Exec(ctx, q, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Another transaction holds A's attempt row, for longer than the urgent
	// renewals' budget.
	holder, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT 1 FROM attempts WHERE id = $1 FOR UPDATE`, a.Attempts[0].ID); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-4500 * time.Millisecond)
	r.mu.Lock()
	r.holdLease(a.ID, func(error) {}, since)
	r.holdLease(b.ID, func(error) {}, since)
	urgent := r.running[a.ID].urgent && r.running[b.ID].urgent
	r.mu.Unlock()
	if !urgent {
		t.Fatal("the late-claimed jobs were not marked urgent: the rig is wrong")
	}
	// Just past B's claim lease.
	att := b.Attempts[0].ID
	state, kind := attemptPastClaimLease(t, db, att)
	if state != store.AttemptRunning {
		t.Fatalf("job B's first attempt, held by this live runner and its rows held by nobody, is %s (%s): its urgent renewals "+
			"failed with job A's (whose attempt row another transaction held) and the next tick came after B's claim lease ran out", state, kind)
	}
}

// attemptPastClaimLease waits, on the database's clock, until just past the
// lease the claim set on attempt att (when it ends within 2 s), runs
// recovery's lease expiry as any replica's leader, and returns the attempt's
// state and error kind.
func attemptPastClaimLease(t *testing.T, db *testdb.DB, att string) (state, kind string) {
	t.Helper()
	waitPastClaimLease(t, db, att)
	return expiredAttemptState(t, db, att)
}

// waitPastClaimLease waits until just past attempt att's lease (when it ends
// within 2 s), on the database's clock.
func waitPastClaimLease(t *testing.T, db *testdb.DB, att string) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), `SELECT pg_sleep(greatest(0, extract(epoch FROM (lease_expires_at + interval '100 milliseconds') - clock_timestamp())))
		FROM attempts WHERE id = $1 AND lease_expires_at < now() + interval '2 seconds'`, att); err != nil {
		t.Fatal(err)
	}
}

// expiredAttemptState runs recovery's lease expiry and returns attempt att's
// state and error kind.
func expiredAttemptState(t *testing.T, db *testdb.DB, att string) (state, kind string) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT state, coalesce(error->>'kind', '') FROM attempts WHERE id = $1`, att).Scan(&state, &kind); err != nil {
		t.Fatal(err)
	}
	return state, kind
}
