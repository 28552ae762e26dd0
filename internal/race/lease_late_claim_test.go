package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// lateClaimLease is the lease of a lateClaim's runner: renewed every 2 s; the
// send fence holds back 0.6 s.
const lateClaimLease = 6 * time.Second

// lateClaim is a fresh job whose claim answered late (a slow COMMIT: a
// synchronous standby, a slow fsync; or a stall between the claim and the
// submit): created, and its claim's answer held back until 4.5 s after the
// claim's statement set its leases (on the database's clock), within the send
// fence (5.4 s). Its one provider holds every call open until the test ends.
type lateClaim struct {
	b          *racetest.Bundle
	job        *store.Job
	plan       store.JobPlan
	called     chan struct{}
	claimLease time.Time // the attempt's lease as the claim set it
}

func newLateClaim(t *testing.T, key string) *lateClaim {
	t.Helper()
	l := &lateClaim{called: make(chan struct{})}
	release := make(chan struct{})
	l.b = racetest.New(t, racetest.Options{Lease: lateClaimLease, Providers: []racetest.Provider{{Name: "primary",
		OnCall: func(int, *providers.Request) { close(l.called) },
		Respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		}}}})
	t.Cleanup(func() { close(release) })
	ctx := context.Background()
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: key,
		PromptVersion: "3", Route: "default", Input: []byte(`{"subject":"Login","body":"I cannot log in."}`),
		LeaseOwner: "test-runner", LeaseFor: lateClaimLease}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", nj.Input)
	plan, _, ok, err := l.b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	l.plan = plan
	nj.First = plan.First()
	job, created, err := l.b.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	l.job = job
	if err := l.b.DB.Pool.QueryRow(ctx, `SELECT lease_expires_at FROM attempts WHERE id = $1`, l.attempt()).Scan(&l.claimLease); err != nil {
		t.Fatal(err)
	}
	if _, err := l.b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM (lease_expires_at - $2::interval + interval '4.5 seconds') - clock_timestamp())))
		FROM attempts WHERE id = $1`, l.attempt(), lateClaimLease); err != nil {
		t.Fatal(err)
	}
	return l
}

// attempt is the job's first attempt's id.
func (l *lateClaim) attempt() string { return l.job.Attempts[0].ID }

// submit hands the job to the runner and returns once its first attempt is
// sent (the fence let it go).
func (l *lateClaim) submit(t *testing.T) {
	t.Helper()
	l.b.Runner.SubmitNew(l.job, l.plan)
	select {
	case <-l.called:
	case <-time.After(10 * time.Second):
		t.Fatal("the first attempt was not sent")
	}
}

// waitPastClaimLease returns once, on the database's clock, the lease the
// claim set has passed (plus a little).
func (l *lateClaim) waitPastClaimLease(t *testing.T) {
	t.Helper()
	if _, err := l.b.DB.Pool.Exec(context.Background(), `SELECT pg_sleep(greatest(0, extract(epoch FROM ($1::timestamptz + interval '100 milliseconds') - clock_timestamp())))`,
		l.claimLease); err != nil {
		t.Fatal(err)
	}
}
