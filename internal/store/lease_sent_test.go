package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// The send fence (internal/race, send_fence.go) counts an attempt's lease
// from when, on the runner's clock, the statement that set it was sent. For
// a job's first attempt that is CreateJob's Job.LeaseSentAt: read as the
// claim statement is made, after the caller's wait for its batch — not when
// CreateJob was called, which counted a slow claim's wait against the lease
// and refused to send an attempt whose lease was fine.
func TestCreateJobLeaseSentAtIsTheClaimsSend(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var queued time.Time // written by the hook, on this goroutine (a lone caller leads its own batch)
	b.st.SetBeforePathEnqueue(func() { queued = time.Now() })
	t.Cleanup(func() { b.st.SetBeforePathEnqueue(nil) })
	nj := newJob(t, "acme", "triage", "lease-sent", `{}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
	called := time.Now()
	job, created, err := b.st.CreateJob(ctx, nj)
	returned := time.Now()
	if err != nil || !created {
		t.Fatalf("create job: created=%v err=%v", created, err)
	}
	if queued.IsZero() || job.LeaseSentAt.Before(queued) || job.LeaseSentAt.After(returned) {
		t.Fatalf("LeaseSentAt %v: want it between the claim's enqueue (%v) and CreateJob's return (%v); called at %v",
			job.LeaseSentAt, queued, returned, called)
	}
	if dup, created, err := b.st.CreateJob(ctx, nj); err != nil || created || !dup.LeaseSentAt.IsZero() {
		t.Fatalf("a job found, not created: created=%v err=%v LeaseSentAt %v; want it zero (no lease of this call's)", created, err, dup.LeaseSentAt)
	}
}

// A claim whose first try committed although its answer was lost, and whose
// retry only found its job: the leases were set by the first try, so
// LeaseSentAt is that try's send, not the retry's (which would let the
// runner send past a lease that had run out by up to the retry's backoff and
// wait).
func TestCreateJobLeaseSentAtOfALostAnswerIsTheFirstTrys(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	st, d := droppingStore(t, b)
	var retried time.Time // the retry's enqueue, after the drop (the hooks run on CreateJob's goroutine)
	st.SetBeforePathEnqueue(func() {
		select {
		case <-d.dropped:
			if retried.IsZero() {
				retried = time.Now()
			}
		default:
		}
	})
	nj := newJob(t, "acme", "triage", "lease-sent-lost", `{}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
	d.armed.Store(true)
	called := time.Now()
	job, created, err := st.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("claim committed but its answer was lost: created=%v err=%v, want created", created, err)
	}
	if retried.IsZero() {
		t.Fatal("the claim was not tried again after its answer was lost: the test did not inject its failure")
	}
	if job.LeaseSentAt.Before(called) || !job.LeaseSentAt.Before(retried) {
		t.Fatalf("LeaseSentAt %v: want the first try's send, after CreateJob was called (%v) and before its retry (%v)",
			job.LeaseSentAt, called, retried)
	}
}

// RenewLeases says which attempts it renewed: those of owner's jobs in
// flight, not another owner's, nor one whose row another transaction holds
// (skipped: its lease is not renewed, and the runner must not count it as
// renewed).
func TestRenewLeasesReturnsTheAttemptsItRenewed(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var ids []string
	attempts := map[string]string{} // job -> its first attempt
	for i, owner := range []string{"r1", "r1", "r2"} {
		nj := newJob(t, "acme", "triage", "renewed-"+itoa(i), `{}`)
		nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, owner, time.Second
		j, _, err := b.st.CreateJob(ctx, nj)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
		attempts[j.ID] = j.Attempts[0].ID
	}
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT FROM attempts WHERE id = $1 FOR UPDATE`, attempts[ids[1]]); err != nil {
		t.Fatal(err)
	}
	renewed, err := b.st.RenewLeases(ctx, "r1", ids, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.RenewedAttempt{{JobID: ids[0], AttemptID: attempts[ids[0]]}}
	if !slices.Equal(renewed.Attempts, want) {
		t.Fatalf("renewed %v, want only %v (r1's attempt whose row was free)", renewed, want)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	long := `lease_expires_at > now() + interval '30 minutes'`
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE `+long); n != 1 {
		t.Fatalf("attempts renewed in the database: %d, want the one returned", n)
	}
}

// MarkAttemptRunningFor renews the attempt's lease as it marks it running,
// counted from the mark's own statement (the runner's send is checked against
// the time just before it), and never shortens it; MarkAttemptRunning leaves
// it as it is.
func TestMarkAttemptRunningForRenewsTheLease(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var as []*store.Attempt
	for _, p := range []string{"p1", "p2", "p3"} { // a job each: a starting attempt blocks its siblings' creation
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "mark-renews-"+p, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: p, Role: store.RolePrimary, LeaseOwner: "test", LeaseFor: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	// p1's and p2's leases have run out (the run stalled before marking them,
	// and recovery has not come by); p3's runs for a day.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = CASE provider WHEN 'p3' THEN now() + interval '1 day'
		ELSE now() - interval '1 second' END`); err != nil {
		t.Fatal(err)
	}
	for _, a := range as[1:] {
		if err := b.st.MarkAttemptRunningFor(ctx, a.ID, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.st.MarkAttemptRunning(ctx, as[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND lease_expires_at < now()`, as[0].ID); n != 1 {
		t.Error("MarkAttemptRunning changed the attempt's lease: want it left as it was")
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND lease_expires_at BETWEEN now() + interval '59 minutes' AND now() + interval '1 hour'`, as[1].ID); n != 1 {
		t.Error("MarkAttemptRunningFor did not renew the attempt's lease for the hour asked, from its statement")
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND lease_expires_at > now() + interval '23 hours'`, as[2].ID); n != 1 {
		t.Error("MarkAttemptRunningFor shortened a longer lease")
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE state = 'running'`); n != 3 {
		t.Errorf("%d attempts running, want 3", n)
	}
}
