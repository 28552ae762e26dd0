package race_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A fresh job whose claim answered late (lateClaim) is still sent, since the
// send fence counts from the claim's statement (Job.LeaseSentAt) and the
// lease has time left. The lease keeper must count the job's lease from the
// claim too, and renew it before it runs out: a keeper that counted it from
// the submit (rgroup9 F1) took it for a lease set a moment ago and first
// renewed it a tick or more later — after the lease set by the claim had run
// out. Recovery on any replica then marked the attempt, in flight on a live
// replica, unknown (lease_expired), and the job with it.
func TestFreshJobLeaseRenewedBeforeItRunsOut(t *testing.T) {
	l := newLateClaim(t, "slow-claim-answer")
	l.submit(t)
	l.waitPastClaimLease(t)
	if _, err := l.b.Store.ExpireAttemptLeases(context.Background()); err != nil {
		t.Fatal(err)
	}
	j := l.b.Job(t, l.job.ID)
	if a := racetest.AttemptOn(j, "primary"); a.State != store.AttemptRunning {
		t.Fatalf("the first attempt, in flight on a live runner that renews its leases, is %s (error %s): its lease ran out before the keeper first renewed it; job %s",
			a.State, a.Error, j.State)
	}
}
