package store_test

import (
	"context"
	"testing"
	"time"
)

// Taking a job's lease is the first write of a run that is not fresh (a
// resumption after a resolution, a caller's retry, an adoption). It had no
// lock_timeout: with the job's row held by another transaction (an
// operator's open psql transaction, a replica cut off in the middle of one)
// the run waited as long as the row was held. It gives up with ErrBusy after
// a bounded wait, taking nothing; once the row is free it takes the lease.
// Found by review.
func TestAcquireJobLeaseGivesUpOnAHeldJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "lease-held", `{"k":"lease-held"}`))
	if err != nil {
		t.Fatal(err)
	}
	holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

	err = b.whileHeld(t, pid, "taking the job's lease", func(ctx context.Context) error {
		ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Minute)
		if ok {
			t.Error("the lease was taken although the job's row was held")
		}
		return err
	})
	wantJobBusy(t, "taking the job's lease", err, j.ID)
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND lease_owner = 'replica-b'`, j.ID); n != 0 {
		t.Fatal("the lease was recorded although taking it gave up")
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Minute); err != nil || !ok {
		t.Fatalf("taking the lease once the row is free: ok %v, err %v", ok, err)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-c", time.Minute); err != nil || ok {
		t.Fatalf("taking a lease another replica holds: ok %v, err %v; want refused", ok, err)
	}
}
