package race_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// slowLooker answers calls at once but blocks every lookup until released.
type slowLooker struct {
	*providers.Scripted
	entered chan string
	release chan struct{}
}

var _ providers.Looker = (*slowLooker)(nil)

func (s *slowLooker) Lookup(ctx context.Context, attemptID string) (*providers.Response, bool, error) {
	s.entered <- attemptID
	select {
	case <-s.release:
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

type recoveryRig struct {
	rb   *racetest.Bundle // DB, store and listener only
	st   *store.Store
	r    *race.Runner
	slow *slowLooker
	seq  atomic.Int64
}

func newRecoveryRig(t *testing.T) *recoveryRig {
	t.Helper()
	db := testdb.New(t, store.Options{})
	rb := racetest.New(t, racetest.Options{DB: db, Providers: []racetest.Provider{{Name: "unused", Respond: racetest.OK(validTriage)}}})
	prompts, err := prompt.LoadDir(racetest.PromptsDir())
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowLooker{
		Scripted: providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m", Respond: racetest.OK(validTriage)}),
		entered:  make(chan string, 10), release: make(chan struct{}),
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r := race.New(race.Config{
		Store: db.Store, Listener: rb.Listener, Prompts: prompts, LeaseOwner: "recoverer", Lease: 30 * time.Second, Log: log,
		Targets: map[string]*race.Target{"primary": {Provider: slow, Model: "m", ContextWindow: 128000, Timeout: time.Minute}},
		Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 2, MaxAttempts: 4}},
		Backoff: race.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond}, ReconcileAfter: time.Nanosecond,
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Stop(ctx)
	})
	return &recoveryRig{rb: rb, st: db.Store, r: r, slow: slow}
}

// orphan creates a job whose orchestrator ("dead") is gone: its lease expired.
func (g *recoveryRig) orphan(t *testing.T) *store.Job {
	t.Helper()
	ctx := context.Background()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	job, _, err := g.st.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: fmt.Sprint("k", g.seq.Add(1)),
		Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "dead", LeaseFor: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.rb.DB.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	return job
}

// unknownAttempt makes a settled-unknown job whose attempt waits for
// reconciliation.
func (g *recoveryRig) unknownAttempt(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	job := g.orphan(t)
	a, err := g.st.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: "primary", Role: store.RolePrimary, LeaseOwner: "dead"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := g.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.st.SettleJob(ctx, job.ID, ""); err != nil {
		t.Fatal(err)
	}
}

func (g *recoveryRig) run(t *testing.T, rc race.RecoveryConfig) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); g.r.RunRecovery(ctx, rc) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// Regression (issue 13): a provider lookup that takes long must not stall the
// recovery loop: while one is blocked, an orphan that appears later is still
// taken over and finished.
func TestSlowReconciliationDoesNotStallOrphanPickup(t *testing.T) {
	g := newRecoveryRig(t)
	g.unknownAttempt(t)
	g.run(t, race.RecoveryConfig{Interval: 10 * time.Millisecond})
	<-g.slow.entered // the lookup is in flight and will not return
	orphan := g.orphan(t)
	if j := g.rb.WaitSettled(t, orphan.ID); j.State != store.JobSucceeded {
		t.Fatalf("orphan created during a slow lookup: %s", j.State)
	}
	select {
	case id := <-g.slow.entered:
		t.Fatalf("attempt %s looked up twice concurrently", id)
	default:
	}
	close(g.slow.release)
}

// fakeLeader is a Leader the test flips; calls signals each IsLeader call.
type fakeLeader struct {
	leading atomic.Bool
	calls   chan struct{}
}

func (f *fakeLeader) IsLeader() bool {
	select {
	case f.calls <- struct{}{}:
	default:
	}
	return f.leading.Load()
}

// Only the leader scans: a follower leaves an orphan alone until it leads
// (for a lease: then it adopts those it can run, stranded_test.go).
func TestRecoveryScansOnlyOnTheLeader(t *testing.T) {
	g := newRecoveryRig(t)
	close(g.slow.release)
	orphan := g.orphan(t)
	leader := &fakeLeader{calls: make(chan struct{})}
	g.run(t, race.RecoveryConfig{Interval: time.Millisecond, Leader: leader})
	for range 3 { // three passes as a follower
		<-leader.calls
	}
	var owner string
	if err := g.rb.DB.Pool.QueryRow(context.Background(), `SELECT lease_owner FROM jobs WHERE id = $1`, orphan.ID).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner != "dead" {
		t.Fatalf("a follower claimed the orphan (lease owner %s)", owner)
	}
	leader.leading.Store(true)
	if j := g.rb.WaitSettled(t, orphan.ID); j.State != store.JobSucceeded {
		t.Fatalf("orphan after becoming leader: %s", j.State)
	}
}
