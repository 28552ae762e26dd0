package store_test

import (
	"context"
	"testing"
	"time"
)

// A job released for a circuit breaker's wait (ReleaseJobLeaseFor) is no
// orphan until the wait is over, on the database's clock: ClaimOrphans,
// oldest first, adopted such jobs again at once, on every pass, ahead of the
// other orphans. Any replica may still take its lease meanwhile (the
// releasing runner does when the wait ends), and recovery adopts it once the
// wait has passed.
func TestJobReleasedForABreakerWaitIsNoOrphanBeforeTheWait(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	waiting := leasedJob(t, b, "breaker-wait", false)
	orphan := leasedJob(t, b, "orphan", false) // created later: behind the waiting job in ClaimOrphans' order
	if err := b.st.ReleaseJobLeaseFor(ctx, waiting.ID, "replica-a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := b.st.ReleaseJobLease(ctx, orphan.ID, "replica-a"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND lease_owner IS NULL
			AND lease_expires_at > now() AND lease_expires_at <= now() + interval '1 hour'`, waiting.ID); n != 1 {
		t.Fatal("the waiting job's lease was not released with an end of the wait from now, on the database's clock")
	}
	ids, err := b.st.ClaimOrphans(ctx, "replica-b", time.Minute, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != orphan.ID {
		t.Fatalf("ClaimOrphans (a batch of one) = %v, want only the orphan %s: the job waiting for a breaker is no orphan yet", ids, orphan.ID)
	}
	// The wait is over (moved into the past on the database's clock).
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = lease_expires_at - interval '1 hour' WHERE id = $1`, waiting.ID); err != nil {
		t.Fatal(err)
	}
	if ids, err := b.st.ClaimOrphans(ctx, "replica-b", time.Minute, 10, nil); err != nil || len(ids) != 1 || ids[0] != waiting.ID {
		t.Fatalf("ClaimOrphans after the wait = %v (%v), want the waiting job", ids, err)
	}
}

// Meanwhile its lease has no owner: any replica may take it.
func TestJobReleasedForABreakerWaitCanBeTakenByAnyReplica(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "breaker-wait", false)
	if err := b.st.ReleaseJobLeaseFor(ctx, j.ID, "replica-a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Minute); err != nil || !ok {
		t.Fatalf("AcquireJobLease during the wait: ok=%v err=%v, want taken", ok, err)
	}
}
