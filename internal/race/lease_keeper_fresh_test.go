package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A fresh job whose claim answered late (a slow COMMIT: a synchronous
// standby, a slow fsync; or a stall between the claim and the submit) is
// still sent, since the send fence counts from the claim's statement
// (Job.LeaseSentAt) and the lease has time left. The lease keeper must count
// the job's lease from the claim too, and renew it before it runs out: a
// keeper that counted it from the submit (rgroup9 F1) took it for a lease set
// a moment ago and first renewed it a tick or more later — after the lease
// set by the claim had run out. Recovery on any replica then marked the
// attempt, in flight on a live replica, unknown (lease_expired), and the job
// with it.
func TestFreshJobLeaseRenewedBeforeItRunsOut(t *testing.T) {
	const lease = 6 * time.Second // renewed every 2 s; the send fence holds back 0.6 s
	called := make(chan struct{})
	release := make(chan struct{})
	b := racetest.New(t, racetest.Options{Lease: lease, Providers: []racetest.Provider{{Name: "primary",
		OnCall: func(int, *providers.Request) { close(called) },
		Respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		}}}})
	defer close(release)
	ctx := context.Background()
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "slow-claim-answer",
		PromptVersion: "2", Route: "default", Input: []byte(`{"subject":"Login","body":"I cannot log in."}`),
		LeaseOwner: "test-runner", LeaseFor: lease}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", nj.Input)
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	nj.First = plan.First()
	job, created, err := b.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	att := job.Attempts[0].ID
	var claimLease time.Time // the attempt's lease as the claim set it
	if err := b.DB.Pool.QueryRow(ctx, `SELECT lease_expires_at FROM attempts WHERE id = $1`, att).Scan(&claimLease); err != nil {
		t.Fatal(err)
	}
	// The claim's answer reaches its caller 4.5 s after its statement set
	// the leases (on the database's clock): within the send fence (5.4 s).
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM (lease_expires_at - $2::interval + interval '4.5 seconds') - clock_timestamp())))
		FROM attempts WHERE id = $1`, att, lease); err != nil {
		t.Fatal(err)
	}
	b.Runner.SubmitNew(job, plan)
	select {
	case <-called: // sent: the fence let it go
	case <-time.After(10 * time.Second):
		t.Fatal("the first attempt was not sent")
	}
	// Wait, on the database's clock, until the lease the claim set has
	// passed (plus a little), then run recovery as any replica's leader.
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM ($1::timestamptz + interval '100 milliseconds') - clock_timestamp())))`,
		claimLease); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	j := b.Job(t, job.ID)
	if a := racetest.AttemptOn(j, "primary"); a.State != store.AttemptRunning {
		t.Fatalf("the first attempt, in flight on a live runner that renews its leases, is %s (error %s): its lease ran out before the keeper first renewed it; job %s",
			a.State, a.Error, j.State)
	}
}
