package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// jobLeaseOwner is the job's lease owner ("" for none).
func jobLeaseOwner(t *testing.T, b *bundle, jobID string) string {
	t.Helper()
	var o string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT coalesce(lease_owner, '') FROM jobs WHERE id = $1`, jobID).Scan(&o); err != nil {
		t.Fatal(err)
	}
	return o
}

// SPEC §6.4, §6.8, §6.9: an expired job lease is not taken from a job with
// an attempt in flight. Its orchestrator stalled past its lease (its renewal
// lagged) while its provider call is still out, under the attempt's own
// lease: a run that took the job over (a resumption: AcquireJobLease) knew
// nothing of the attempt and failed over beside it at once. ClaimOrphans
// never adopted such a job; AcquireJobLease took it. Its holder still renews
// its own lease, and once nothing is in flight the expired lease is anyone's.
// Found by review.
func TestAcquireJobLeaseLeavesAJobWithAnAttemptInFlight(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "inflight-take", true) // replica-a's, its first attempt running
	expireJobLease(t, b, j.ID)
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Hour); err != nil || ok {
		t.Fatalf("replica-b took the expired lease of a job with an attempt in flight: ok=%v err=%v; want refused", ok, err)
	}
	if o := jobLeaseOwner(t, b, j.ID); o != "replica-a" {
		t.Fatalf("lease owner %q after a refused take, want replica-a", o)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-a", time.Hour); err != nil || !ok {
		t.Fatalf("the holder renewing its own expired lease, its attempt in flight: ok=%v err=%v", ok, err)
	}

	expireJobLease(t, b, j.ID)
	if err := b.st.FinishAttempt(ctx, j.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptFailed,
		Error: map[string]any{"kind": "server_error", "message": "boom"}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Hour); err != nil || !ok {
		t.Fatalf("taking the expired lease once nothing is in flight: ok=%v err=%v", ok, err)
	}
	if o := jobLeaseOwner(t, b, j.ID); o != "replica-b" {
		t.Fatalf("lease owner %q, want replica-b", o)
	}
}

// The check sees an attempt committed while AcquireJobLease waited for the
// job's row: a stalled orchestrator whose lease has just expired locks the
// row in CreateAttempt (its fence checks the owner, not the lease's end) and
// commits an attempt. One UPDATE read the attempts on the snapshot of its
// start, taken before it waited, and PostgreSQL's re-check of the row it
// waited for does not read other tables again: it took the lease of a job
// with an attempt in flight. The row is now locked first, by a statement of
// its own in the same round trip, and the condition read after.
func TestAcquireJobLeaseSeesAnAttemptCommittedWhileItWaited(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "inflight-wait", false) // pending, replica-a's, nothing in flight
	expireJobLease(t, b, j.ID)
	// Replica a's CreateAttempt, in the middle of its transaction: the job's
	// row locked, its attempt inserted, not committed yet.
	holder, pid := b.hold(t, `SELECT FROM jobs WHERE id = $1 AND lease_owner = 'replica-a' FOR UPDATE`, j.ID)
	if _, err := holder.Exec(ctx, `INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, lease_owner, lease_expires_at)
		VALUES ($1, $2, 1, 'p1', 'primary', 'running', 1, 'replica-a', now() + interval '1 hour')`, store.NewAttemptID(), j.ID); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ok  bool
		err error
	}
	got := make(chan result, 1)
	go func() {
		ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Hour)
		got <- result{ok, err}
	}()
	b.awaitBlockedBy(t, pid)
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("AcquireJobLease: %v (the holder committed within the lock wait)", r.err)
	}
	if r.ok || jobLeaseOwner(t, b, j.ID) != "replica-a" {
		t.Fatalf("replica-b took the lease (ok=%v, owner %q) of a job whose attempt committed while it waited for the row; want refused, still replica-a's",
			r.ok, jobLeaseOwner(t, b, j.ID))
	}
}
