package race_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A replica stalled (a freeze, a CPU stall, a claim's answer that came
// late) between its claim's commit and the send, for longer than the first
// attempt's lease: recovery marked the attempt unknown (lease_expired). The
// replica woke and sent it all the same — nothing checked the lease before
// the send — and reconciliation, counting from the expiry, looked the
// attempt up while that late call was in flight, found no record, resolved it
// failed and ran the job again: the same target got the request twice for
// one intent. The runner now refuses to send an attempt whose lease was set
// the lease (less a margin) ago or more on its own monotonic clock, records
// it as never sent, and runs the job again. Found by review.
//
// The stall is real, on both clocks: the test waits, in the database, until
// the claim's leases have expired (as crashAfterClaim does), with a short
// lease. The provider's call, once made, waits for the test's release, so
// reconciliation runs while it is in flight.
func TestFirstAttemptWhoseLeaseRanOutIsNotSent(t *testing.T) {
	const lease = 2 * time.Second
	inCall := make(chan struct{})
	release := make(chan struct{})
	var inCallOnce sync.Once
	b := racetest.New(t, racetest.Options{Lease: lease, Providers: []racetest.Provider{{Name: "primary",
		Respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		},
		OnCall: func(int, *providers.Request) { inCallOnce.Do(func() { close(inCall) }) }}}})
	ctx := context.Background()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "lease-ran-out", Fingerprint: fp, PromptVersion: "1",
		Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: lease}
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	nj.First = plan.First()
	job, created, err := b.Store.CreateJob(ctx, nj)
	if err != nil || !created || len(job.Attempts) != 1 {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	// The stall: until the claim's leases have expired, on the database's
	// clock (and so on the runner's: they were set after it planned).
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM lease_expires_at - clock_timestamp())) + 0.001)
		FROM attempts WHERE id = $1`, job.Attempts[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if j := b.Job(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("after recovery's expiry the job is %s, want unknown", j.State)
	}
	b.Runner.SubmitNew(job, plan) // the replica wakes up
	select {
	case <-inCall:
	case <-time.After(hangBound):
		j := b.Job(t, job.ID)
		t.Fatalf("the provider was never called: job %s, attempts %s", j.State, attemptsOf(j))
	}
	// Reconciliation while a call is in flight: it must find nothing to
	// look up, the stalled attempt being recorded as never sent.
	b.Runner.RecoverOnce(ctx, 10)
	close(release)
	j := waitEnded(t, b, job.ID)
	b.Stop() // every run of the job has ended: no call is still to come
	if n := b.Prov["primary"].Calls(); n != 1 {
		t.Fatalf("one intent, %d provider calls on the same target; attempts %s", n, attemptsOf(j))
	}
	if j.State != store.JobSucceeded || !store.NotSent(j.Attempts[0]) {
		t.Fatalf("job %s (%s), attempts %s: want the stalled attempt recorded as never sent and the job won by the next", j.State, derefString(j.Error), attemptsOf(j))
	}
	if n := b.Prov["primary"].CallsFor(j.Attempts[0].ID); n != 0 {
		t.Fatalf("the attempt whose lease had run out was sent %d times", n)
	}
}

// The same for an attempt created by a run (CreateAttempt): a run stalled
// for its lease between the attempt's creation and its send does not send
// it; it records it as never sent and runs the job again, and the job's next
// attempt is the one its provider gets. The stall is the store's hook,
// after the creation's commit, for the lease on the runner's clock.
func TestCreatedAttemptWhoseLeaseRanOutIsNotSent(t *testing.T) {
	const lease = 2 * time.Second
	b := racetest.New(t, racetest.Options{Lease: lease, Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	var once sync.Once
	stalled := make(chan string, 1)
	b.Store.SetAfterCreateAttempt(func(a *store.Attempt) error {
		once.Do(func() {
			<-time.After(lease) // the stall: the condition under test, not a synchronisation
			stalled <- a.ID
		})
		return nil
	})
	job := b.SubmitUnplanned(t) // its first attempt is created by its run (start)
	var id string
	select {
	case id = <-stalled:
	case <-time.After(hangBound):
		t.Fatal("the job's run created no attempt")
	}
	j := waitEnded(t, b, job.ID)
	b.Stop()
	if a := attemptByID(t, j, id); !store.NotSent(*a) {
		t.Fatalf("the attempt whose lease ran out is %s (%s): want it recorded as never sent", a.State, a.Error)
	}
	if n := b.Prov["primary"].CallsFor(id); n != 0 {
		t.Fatalf("the attempt whose lease ran out was sent %d times", n)
	}
	if n := b.Prov["primary"].Calls(); j.State != store.JobSucceeded || n != 1 {
		t.Fatalf("job %s, %d calls, attempts %s: want it won by its next attempt, the one call", j.State, n, attemptsOf(j))
	}
}
