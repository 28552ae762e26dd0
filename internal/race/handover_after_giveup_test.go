package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// stuckRunAdapter is a provider whose first call ignores its context until the
// test releases it (an adapter that does not watch its context, or a call
// stuck in a read without deadline): the run holding it does not end when
// Stop cuts it, so Stop gives up on it after StopGrace.
type stuckRunAdapter struct {
	called  chan struct{}
	release chan struct{}
	n       atomic.Int64
}

func (p *stuckRunAdapter) Name() string { return "primary" }

func (p *stuckRunAdapter) Complete(ctx context.Context, _ *providers.Request) (*providers.Response, error) {
	if p.n.Add(1) == 1 {
		close(p.called)
		<-p.release
	}
	return nil, &providers.Error{Provider: "primary", Kind: providers.KindServerError, StatusCode: 503}
}

// SPEC §17: no job becomes unknown because a process was told to stop. A job
// the API creates while the router stops (its request was being read when
// SIGTERM came; shutdown.http lets it finish) is handed over by SubmitNew:
// its first attempt, never sent, is recorded cancelled not_sent and the
// job's lease released for a live replica. Once Runner.Stop has given up on
// a stuck job run (awaitRuns cancelled r.hard), every hand-over's
// exitContext is born cancelled (detached's AfterFunc on r.hard fires at
// once): the hand-over writes nothing, the attempt stays in flight (running, never
// sent) under this dead replica's lease, and recovery marks it unknown (lease_expired) — and
// the job unknown — when the lease expires.
func TestHandOverAfterStopGaveUpStillRecordsTheUnsentAttempt(t *testing.T) {
	p := &stuckRunAdapter{called: make(chan struct{}), release: make(chan struct{})}
	b := racetest.New(t, racetest.Options{StopGrace: 200 * time.Millisecond,
		Providers: []racetest.Provider{{Name: "primary", Adapter: p}}})
	t.Cleanup(func() { close(p.release) }) // runs before the bundle's own cleanup
	b.Submit(t)
	<-p.called

	// The API plans a new job as SIGTERM comes (its plan has a first attempt).
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	plan, _, planned, err := b.Runner.Plan(&store.Job{Operation: "triage", PromptVersion: "3", Route: "default", Input: input})
	if err != nil || !planned || plan.First() == nil {
		t.Fatalf("plan: %v %v", err, planned)
	}
	b.Runner.Drain(0)
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	b.Runner.Stop(cut) // the drain ran out: the stuck run is cut, waited for StopGrace, given up on

	// The request's job commits now (its handler was still within shutdown.http).
	fp, _ := store.Fingerprint("triage", "", "", input)
	job, created, err := b.Store.CreateJob(context.Background(), store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "after-giveup",
		Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second,
		First: plan.First()})
	if err != nil || !created || len(job.Attempts) != 1 {
		t.Fatalf("create: %v %v %+v", err, created, job)
	}
	b.Runner.SubmitNew(job, plan)

	j := b.Job(t, job.ID)
	if len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptCancelled || !strings.Contains(string(j.Attempts[0].Error), "not_sent") {
		t.Errorf("first attempt %s %s, want cancelled not_sent: left in flight under this stopped replica's lease, recovery makes it unknown (lease_expired)",
			j.Attempts[0].State, j.Attempts[0].Error)
	}
	if owner := jobLeaseOwner(t, b, job.ID); owner != "" {
		t.Errorf("job lease still held by %q after the hand-over: no live replica can adopt it before the lease expires", owner)
	}

	// What follows: the leases expire (nothing renews them), and a live
	// replica's recovery decides the never-sent attempt's fate.
	ctx := context.Background()
	for _, q := range []string{`UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1 AND lease_owner IS NOT NULL`,
		`UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1 AND lease_expires_at IS NOT NULL`} {
		if _, err := b.DB.Pool.Exec(ctx, q, job.ID); err != nil {
			t.Fatal(err)
		}
	}
	other := racetest.New(t, racetest.Options{DB: b.DB, LeaseOwner: "replica-2", Providers: []racetest.Provider{
		{Name: "primary", Adapter: noLookup{providers.NewScripted(providers.ScriptedConfig{Name: "primary", Respond: racetest.OK(validTriage)})}}}})
	other.Runner.RecoverOnce(ctx, 10)
	if j := other.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Errorf("job %s after a live replica's recovery (attempts %s), want succeeded: its only attempt was never sent, the router's stop made it %s",
			j.State, attemptsOf(j), j.State)
	}
}

func jobLeaseOwner(t *testing.T, b *racetest.Bundle, id string) string {
	t.Helper()
	var owner *string
	if err := b.DB.Pool.QueryRow(context.Background(), `SELECT lease_owner FROM jobs WHERE id = $1`, id).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner == nil {
		return ""
	}
	return *owner
}
