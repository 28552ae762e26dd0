package race_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// These tests use a short lease (fenceLease): the stalls they make are real,
// on both clocks, and last about that long.
const fenceLease = time.Second

// planAndClaim plans a triage job and creates it with its first attempt, as
// the API does, with the lease fenceLease; between the two it runs between
// (nil: nothing).
func planAndClaim(t *testing.T, b *racetest.Bundle, key string, between func()) (*store.Job, store.JobPlan) {
	t.Helper()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: key, Fingerprint: fp, PromptVersion: "3",
		Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: fenceLease}
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	nj.First = plan.First()
	if between != nil {
		between()
	}
	job, created, err := b.Store.CreateJob(context.Background(), nj)
	if err != nil || !created || len(job.Attempts) != 1 {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	return job, plan
}

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
// the claim's leases have expired. The provider's call, once made, waits for
// the test's release, so reconciliation runs while it is in flight.
func TestFirstAttemptWhoseLeaseRanOutIsNotSent(t *testing.T) {
	inCall := make(chan struct{})
	release := make(chan struct{})
	var inCallOnce sync.Once
	b := racetest.New(t, racetest.Options{Lease: fenceLease, Providers: []racetest.Provider{{Name: "primary",
		Respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		},
		OnCall: func(int, *providers.Request) { inCallOnce.Do(func() { close(inCall) }) }}}})
	ctx := context.Background()
	job, plan := planAndClaim(t, b, "lease-ran-out", nil)
	// The stall: until the claim's leases have expired, on the database's
	// clock (and so on the runner's: they were set after it claimed).
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

// No false positive: a claim slow to be sent (here its caller was held for
// nineteen twentieths of the lease after planning the job, as a claim waits
// for its batch, or an earlier try's answer) sets the leases when its
// statement is sent, and the first attempt's send is checked against that,
// not against the plan: it is sent, once. Counted from the plan, it was
// refused although its lease had all its time ahead. Found by review.
func TestFirstAttemptOfASlowClaimIsSent(t *testing.T) {
	b := racetest.New(t, racetest.Options{Lease: fenceLease, Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	job, plan := planAndClaim(t, b, "slow-claim", func() {
		<-time.After(fenceLease * 19 / 20) // the slow claim: the condition under test, not a synchronisation
	})
	b.Runner.SubmitNew(job, plan)
	j := waitEnded(t, b, job.ID)
	b.Stop()
	if n := b.Prov["primary"].Calls(); j.State != store.JobSucceeded || n != 1 || len(j.Attempts) != 1 || store.NotSent(j.Attempts[0]) {
		t.Fatalf("job %s (%s), %d calls, attempts %s: want the first attempt sent once, and the job won by it",
			j.State, derefString(j.Error), n, attemptsOf(j))
	}
}

// launchHook is an Observer that runs onStart as an attempt is launched —
// after it was marked running, before its request is sent — and onFinish as
// its run ends, before the race hears of it.
type launchHook struct {
	onStart  func(role string)
	onFinish func(role, state string)
}

func (h *launchHook) AttemptStarted(_, role string) {
	if h.onStart != nil {
		h.onStart(role)
	}
}

func (h *launchHook) AttemptFinished(_, role, state string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	if h.onFinish != nil {
		h.onFinish(role, state)
	}
}
func (*launchHook) RaceLost(string)     {}
func (*launchHook) HedgeStarted(string) {}
func (*launchHook) JobSettled(string)   {}

// A hedge whose run stalled past its lease between its running mark and
// its send — the lease keeper not renewing it either, as when the whole
// process stalls — after recovery marked it unknown: it is not sent. It is
// recorded as never sent, and the race goes on beside the primary still in
// flight, the job's lease kept: released, another replica could adopt the
// job and call beside the primary (the check taken out before did so). The
// hedge is tried again, and wins.
//
// The stall holds the hedge's row (so the keeper, which skips held rows,
// does not renew it) until its lease has run out on the database's clock,
// then lets recovery's expiry, already waiting for the row, mark it unknown.
func TestHedgeWhoseLeaseRanOutIsNotSentBesideItsPrimary(t *testing.T) {
	ctx := context.Background()
	var b *racetest.Bundle
	var stallOnce sync.Once
	var stalled string             // the hedge held back; written by onStart before the hedge's run starts
	owner := make(chan *string, 1) // the job's lease owner as the held-back hedge's run ended
	hook := &launchHook{}
	hook.onStart = func(role string) {
		if role == store.RoleHedge {
			stallOnce.Do(func() { stalled = stallPastLease(t, b) })
		}
	}
	hook.onFinish = func(role, state string) {
		if role != store.RoleHedge || state != "unsent" {
			return
		}
		var o *string
		if err := b.DB.Pool.QueryRow(ctx, `SELECT j.lease_owner FROM jobs j JOIN attempts a ON a.job_id = j.id WHERE a.id = $1`,
			stalled).Scan(&o); err != nil {
			t.Error(err)
		}
		select {
		case owner <- o:
		default:
		}
	}
	b = racetest.New(t, racetest.Options{Lease: fenceLease, Observer: hook, Route: race.Route{HedgeAfter: 50 * time.Millisecond},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.Hang}, {Name: "hedge", Respond: racetest.OK(validTriage)}}})
	job := b.Submit(t)
	j := waitEnded(t, b, job.ID)
	b.Stop()
	if stalled == "" {
		t.Fatalf("no hedge was held back; attempts %s", attemptsOf(j))
	}
	if n := b.Prov["hedge"].CallsFor(stalled); n != 0 {
		t.Fatalf("the hedge whose lease had run out was sent %d times; attempts %s", n, attemptsOf(j))
	}
	if a := attemptByID(t, j, stalled); !store.NotSent(*a) {
		t.Fatalf("the hedge whose lease ran out is %s (%s): want it recorded as never sent", a.State, a.Error)
	}
	select {
	case o := <-owner:
		if o == nil || *o != "test-runner" {
			t.Fatalf("the job's lease owner as the held-back hedge was recorded: %v, want this runner's still (its primary was in flight)", derefString(o))
		}
	default:
		t.Fatal("the held-back hedge's run did not end as never sent")
	}
	if j.State != store.JobSucceeded || j.CompletedBy == nil {
		t.Fatalf("job %s (%s), attempts %s: want it won by the hedge tried again", j.State, derefString(j.Error), attemptsOf(j))
	}
	if w := attemptByID(t, j, *j.CompletedBy); w.Provider != "hedge" || w.ID == stalled {
		t.Fatalf("won by %s (%s), want the hedge tried again; attempts %s", w.Provider, w.ID, attemptsOf(j))
	}
}

// stallPastLease is the stall of TestHedgeWhoseLeaseRanOutIsNotSentBesideItsPrimary,
// run on the orchestrator's goroutine as the hedge is launched: it returns
// the hedge's id once recovery has marked it unknown.
func stallPastLease(t *testing.T, b *racetest.Bundle) string {
	ctx := context.Background()
	tx, err := b.DB.Pool.Begin(ctx)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer tx.Rollback(ctx)
	var id string
	var pid int
	if err := tx.QueryRow(ctx, `SELECT id::text, pg_backend_pid() FROM attempts WHERE role = 'hedge' AND state = 'running' FOR UPDATE`).
		Scan(&id, &pid); err != nil {
		t.Error(err)
		return ""
	}
	if _, err := tx.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM lease_expires_at - clock_timestamp())) + 0.001)
		FROM attempts WHERE id = $1`, id); err != nil {
		t.Error(err)
		return id
	}
	expired := make(chan error, 1)
	go func() {
		_, err := b.Store.ExpireAttemptLeases(ctx)
		expired <- err
	}()
	// Until the expiry waits for the row: it then holds it next, and the
	// keeper (which skips held rows) cannot renew the lease in between.
	for {
		var waiting bool
		if err := b.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE $1::int = ANY(pg_blocking_pids(pid)) AND query LIKE '%UPDATE attempts a SET state%')`, pid).Scan(&waiting); err != nil {
			t.Error(err)
			return id
		}
		if waiting {
			break
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Error(err)
	}
	if err := <-expired; err != nil {
		t.Error(err)
	}
	var state string
	if err := b.DB.Pool.QueryRow(ctx, `SELECT state FROM attempts WHERE id = $1`, id).Scan(&state); err != nil || state != store.AttemptUnknown {
		t.Errorf("after the stall the hedge is %s (%v), want unknown (recovery's expiry)", state, err)
	}
	return id
}

// No false positive: a hedge whose orchestration stalled for nineteen
// twentieths of the lease between its running mark and its send, while the
// lease keeper went on renewing its lease, is sent: the renewals count. The
// check taken out before counted only from the attempt's creation, refused
// it, and gave the job's lease back under its primary in flight. Found by
// review.
func TestHedgeHeldWhileItsLeaseIsRenewedIsSent(t *testing.T) {
	ctx := context.Background()
	var b *racetest.Bundle
	var holdOnce sync.Once
	var held string
	hook := &launchHook{onStart: func(role string) {
		if role != store.RoleHedge {
			return
		}
		holdOnce.Do(func() {
			start := time.Now()
			if err := b.DB.Pool.QueryRow(ctx, `SELECT id::text FROM attempts WHERE role = 'hedge' AND state = 'running'`).Scan(&held); err != nil {
				t.Error(err)
				return
			}
			<-time.After(fenceLease*19/20 - time.Since(start)) // the stall: the condition under test
			// Then until two more renewals of the hedge's lease have
			// committed: the keeper, which renews one tick at a time, has
			// noted the first of them by the second.
			var last time.Time
			for changes := 0; changes < 3; {
				var at time.Time
				if err := b.DB.Pool.QueryRow(ctx, `SELECT lease_expires_at FROM attempts WHERE id = $1`, held).Scan(&at); err != nil {
					t.Error(err)
					return
				}
				if !at.Equal(last) {
					changes++ // the first read counts as one
					last = at
				}
				time.Sleep(5 * time.Millisecond) // a poll's pace
			}
		})
	}}
	b = racetest.New(t, racetest.Options{Lease: fenceLease, Observer: hook, Route: race.Route{HedgeAfter: 50 * time.Millisecond},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.Hang}, {Name: "hedge", Respond: racetest.OK(validTriage)}}})
	job := b.Submit(t)
	j := waitEnded(t, b, job.ID)
	b.Stop()
	if held == "" {
		t.Fatalf("no hedge was held; attempts %s", attemptsOf(j))
	}
	if n := b.Prov["hedge"].CallsFor(held); n != 1 || j.State != store.JobSucceeded || j.CompletedBy == nil || *j.CompletedBy != held {
		t.Fatalf("the held hedge was sent %d times; job %s (%s), attempts %s: want it sent once, and the job won by it",
			n, j.State, derefString(j.Error), attemptsOf(j))
	}
	for _, a := range j.Attempts {
		if store.NotSent(a) {
			t.Fatalf("attempt %s recorded as never sent: %s", a.ID, a.Error)
		}
	}
}
