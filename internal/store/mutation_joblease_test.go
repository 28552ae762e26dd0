package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A job's orchestration lease keeps it to one orchestrator (SPEC §6.8, §6.9):
// AcquireJobLease takes a lease that is free, expired (on the database's
// clock) or already the caller's, and never one another live process holds;
// nor that of a job that no longer needs one.
func TestAcquireJobLeaseNeverTakesALiveLease(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "live-lease", false) // nothing in flight: an expired lease is then anyone's (joblease_inflight_test.go)
	owner := func() string {
		t.Helper()
		var o string
		if err := b.db.Pool.QueryRow(ctx, `SELECT coalesce(lease_owner, '') FROM jobs WHERE id = $1`, j.ID).Scan(&o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Hour); err != nil || ok {
		t.Fatalf("replica-b took replica-a's live lease: ok=%v err=%v", ok, err)
	}
	if o := owner(); o != "replica-a" {
		t.Fatalf("lease owner %q after a refused take, want replica-a", o)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-a", time.Hour); err != nil || !ok {
		t.Fatalf("the holder renewing its own lease: ok=%v err=%v", ok, err)
	}
	// Expired on the database's clock: anyone may take it.
	expireJobLease(t, b, j.ID)
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Hour); err != nil || !ok {
		t.Fatalf("taking an expired lease: ok=%v err=%v", ok, err)
	}
	if o := owner(); o != "replica-b" {
		t.Fatalf("lease owner %q, want replica-b", o)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-a", time.Hour); err != nil || ok {
		t.Fatalf("the former owner took the lease back from its live holder: ok=%v err=%v", ok, err)
	}
	// A job that ended needs no orchestrator.
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-c", time.Hour); err != nil || ok {
		t.Fatalf("took the lease of a cancelled job: ok=%v err=%v", ok, err)
	}
}

// ClaimOrphans adopts only jobs that need an orchestrator: pending or running,
// nothing in flight, and no live lease. A job whose orchestrator is alive
// (between two attempts, or waiting out a retry's backoff, with nothing in
// flight) is not an orphan; nor is a job with an attempt in flight whose
// orchestrator's lease has expired (its attempt's own lease decides:
// ExpireAttemptLeases), nor an ended job.
func TestClaimOrphansTakesOnlyOrphans(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	live := leasedJob(t, b, "live", false)        // pending, nothing in flight, lease live
	inflight := leasedJob(t, b, "inflight", true) // running, attempt in flight
	expireJobLease(t, b, inflight.ID)             // its orchestrator's lease expired; the attempt's has not
	orphan := leasedJob(t, b, "orphan", false)    // pending, nothing in flight, lease expired
	expireJobLease(t, b, orphan.ID)
	ended := leasedJob(t, b, "ended", false)
	if err := b.st.CancelJob(ctx, "acme", ended.ID); err != nil {
		t.Fatal(err)
	}
	expireJobLease(t, b, ended.ID)
	_ = live

	ids, err := b.st.ClaimOrphans(ctx, "replica-b", time.Hour, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != orphan.ID {
		t.Fatalf("claimed %v, want only the orphan %s", ids, orphan.ID)
	}
	var owners []string
	for _, j := range []*store.Job{live, inflight, orphan} {
		var o string
		if err := b.db.Pool.QueryRow(ctx, `SELECT coalesce(lease_owner, '') FROM jobs WHERE id = $1`, j.ID).Scan(&o); err != nil {
			t.Fatal(err)
		}
		owners = append(owners, o)
	}
	if owners[0] != "replica-a" || owners[1] != "replica-a" || owners[2] != "replica-b" {
		t.Fatalf("lease owners (live, in flight, orphan) = %v, want replica-a, replica-a, replica-b", owners)
	}
}
