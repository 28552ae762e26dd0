package race

import (
	"context"
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
	t.Cleanup(func() {
		r.cancelBase(errShutdown)
		r.keeperWG.Wait()
	})
	// Another job of this runner keeps the keeper ticking.
	r.mu.Lock()
	r.holdLease(store.NewAttemptID(), func(error) {}, time.Now())
	r.mu.Unlock()

	input := []byte(`{"subject":"Login","body":"I cannot log in."}`)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "urgent-tick", PromptVersion: "2", Route: "default",
		Input: input, LeaseOwner: "me", LeaseFor: lease,
		First: &store.FirstAttempt{Provider: "primary", Model: "m", Role: store.RolePrimary}}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", input)
	since := time.Now()
	job, created, err := db.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	if !job.LeaseSentAt.IsZero() {
		since = job.LeaseSentAt
	}
	att := job.Attempts[0].ID

	// The tick that comes more than 4.3 s after the claim: the next one, 2 s
	// later, comes after the claim's lease (6 s) has run out.
	var tickAt time.Time
	for {
		r.mu.Lock()
		next := r.nextRenewal
		r.mu.Unlock()
		if next.Sub(since) > 4300*time.Millisecond {
			tickAt = next
			break
		}
		time.Sleep(time.Until(next) + 100*time.Millisecond)
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
	// The submit of the late-claimed job comes as the tick fires: the keeper's
	// tick pass waits for r.mu while holdLease runs (as submit calls it). In
	// the control it comes a second before the tick, the keeper idle.
	if atTick {
		time.Sleep(time.Until(tickAt) - 200*time.Millisecond)
	} else {
		time.Sleep(time.Until(tickAt) - time.Second)
	}
	r.mu.Lock()
	if atTick {
		time.Sleep(time.Until(tickAt) + 300*time.Millisecond)
	}
	r.holdLease(job.ID, func(error) {}, since)
	if !r.running[job.ID].urgent {
		r.mu.Unlock()
		t.Fatal("the late-claimed job was not marked urgent: the rig is wrong")
	}
	r.mu.Unlock()
	// Let the keeper's passes (the tick's, then the woken one) run.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		urgent := r.running[job.ID].urgent
		r.mu.Unlock()
		if !urgent {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
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
