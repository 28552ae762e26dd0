// Package racetest runs the race engine for tests: a runner on a test's own
// schema of a real PostgreSQL (internal/testdb), with scripted providers, the
// repository's example prompts and a notification listener, shaped as a
// bundle that a test's setup returns. It owns nothing in production and must
// only be imported by tests.
package racetest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// ValidTriage passes the triage prompt's schema and contract.
const ValidTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`

// Provider is one scripted provider of the test route, in route order.
type Provider struct {
	Name    string
	Respond func(call int, req *providers.Request) providers.Step
	OnCall  func(call int, req *providers.Request)
	Timeout time.Duration // default 1m
	// FirstByteTimeout is the target's (race.Target.FirstByteTimeout: the
	// race's first-byte budget; a scripted provider does not enforce it).
	FirstByteTimeout time.Duration
	MaxRetries       int
	ContextWindow    int // default 128000
	// Adapter, when set, is used instead of a scripted provider (a real adapter
	// on an httptest server); Respond and OnCall are then unused.
	Adapter providers.Provider
	// Price, when set, prices the provider's attempts.
	Price *providers.Price
}

// Options configure a Bundle. Route.Providers is filled from Providers.
type Options struct {
	Route     race.Route
	Providers []Provider
	Admission race.Admission
	Observer  race.Observer
	Gate      race.Gate
	// DB, when set, is shared (several runners on one database); otherwise
	// the bundle makes its own schema.
	DB *testdb.DB
	// LeaseOwner names the runner (default "test-runner").
	LeaseOwner string
	// Lease is the runner's lease (default 30s; renewed every third of it).
	Lease time.Duration
	// Prompts are the runner's prompts (default: the repository's prompts/).
	Prompts *prompt.Set
	// HandoverWait is the runner's race.Config.HandoverWait (default its own).
	HandoverWait time.Duration
	// StopGrace is the runner's race.Config.StopGrace (default its own).
	StopGrace time.Duration
	// Log is the runner's and the listener's log (default: warnings and
	// errors to stderr).
	Log *slog.Logger
}

// Bundle is a running race engine.
type Bundle struct {
	DB       *testdb.DB
	Store    *store.Store
	Runner   *race.Runner
	Listener *store.Listener
	Prov     map[string]*providers.Scripted
	owner    string
	stopped  bool
}

// New starts a runner for t; it is stopped when t ends.
func New(t testing.TB, o Options) *Bundle {
	t.Helper()
	db := o.DB
	if db == nil {
		db = testdb.New(t, store.Options{})
	}
	prompts := o.Prompts
	if prompts == nil {
		var err error
		if prompts, err = prompt.LoadDir(PromptsDir()); err != nil {
			t.Fatal(err)
		}
	}
	owner := o.LeaseOwner
	if owner == "" {
		owner = "test-runner"
	}
	b := &Bundle{DB: db, Store: db.Store, Prov: map[string]*providers.Scripted{}, owner: owner}
	route := o.Route
	targets := map[string]*race.Target{}
	for _, p := range o.Providers {
		var sp providers.Provider = p.Adapter
		if sp == nil {
			scripted := providers.NewScripted(providers.ScriptedConfig{Name: p.Name, Model: p.Name + "-model", Respond: p.Respond, OnCall: p.OnCall})
			b.Prov[p.Name] = scripted
			sp = scripted
		}
		timeout := p.Timeout
		if timeout == 0 {
			timeout = time.Minute
		}
		window := p.ContextWindow
		if window == 0 {
			window = 128000
		}
		targets[p.Name] = &race.Target{Provider: sp, Model: p.Name + "-model", ContextWindow: window, Timeout: timeout, FirstByteTimeout: p.FirstByteTimeout, MaxRetries: p.MaxRetries, Price: p.Price}
		route.Providers = append(route.Providers, p.Name)
	}
	if route.MaxInflight == 0 {
		route.MaxInflight = 2
	}
	if route.MaxAttempts == 0 {
		route.MaxAttempts = 4
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	b.Listener = store.NewListener(db.Pool, log)
	ctx, cancel := context.WithCancel(context.Background())
	go b.Listener.Run(ctx)
	<-b.Listener.Ready()
	b.Runner = race.New(race.Config{
		Store: db.Store, Listener: b.Listener, Prompts: prompts, Targets: targets,
		Routes: map[string]*race.Route{"default": &route}, LeaseOwner: owner, Lease: cmp.Or(o.Lease, 30*time.Second), Log: log,
		Backoff:        race.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond},
		ReconcileAfter: time.Nanosecond, HandoverWait: o.HandoverWait, StopGrace: o.StopGrace,
		Admission: o.Admission, Observer: o.Observer, Gate: o.Gate,
	})
	t.Cleanup(func() {
		b.Stop()
		cancel()
	})
	return b
}

// PromptsDir is the repository's prompts/ directory.
func PromptsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "prompts")
}

// Stop waits for every running job of the runner to end.
func (b *Bundle) Stop() {
	if b.stopped {
		return
	}
	b.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.Runner.Stop(ctx)
}

var keySeq atomic.Int64

// Submit creates a triage job as the API does — planned by the runner, with
// its first attempt in the same commit — and hands both to the runner.
func (b *Bundle) Submit(t testing.TB) *store.Job {
	t.Helper()
	nj := b.newJob(b.owner)
	plan, _, ok, err := b.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	if plan != nil {
		nj.First = plan.First()
	}
	job, created, err := b.Store.CreateJob(context.Background(), nj)
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	b.Runner.SubmitNew(job, plan)
	return job
}

// SubmitUnplanned creates a triage job alone and hands it to the runner, the
// way a resumed or adopted job starts.
func (b *Bundle) SubmitUnplanned(t testing.TB) *store.Job {
	t.Helper()
	job := b.Create(t, b.owner)
	b.Runner.Submit(job)
	return job
}

// Create creates a triage job whose lease is held by leaseOwner, without
// running it.
func (b *Bundle) Create(t testing.TB, leaseOwner string) *store.Job {
	t.Helper()
	job, created, err := b.Store.CreateJob(context.Background(), b.newJob(leaseOwner))
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	return job
}

func (b *Bundle) newJob(leaseOwner string) store.NewJob {
	key := fmt.Sprintf("key-%d", keySeq.Add(1))
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	return store.NewJob{
		Owner: "acme", Operation: "triage", IdempotencyKey: key, Fingerprint: fp,
		PromptVersion: "3", Route: "default", Input: input, LeaseOwner: leaseOwner, LeaseFor: 30 * time.Second,
	}
}

// WaitSettled waits, on the database's notifications, until the job is
// terminal or unknown, and returns it. It watches the job (store.WatchJob), as
// a waiter on another replica than the job's runner does.
func (b *Bundle) WaitSettled(t testing.TB, id string) *store.Job {
	t.Helper()
	changed, unsubscribe := b.Listener.Subscribe(id)
	defer unsubscribe()
	timeout := time.After(60 * time.Second)
	for {
		state, err := b.Store.WatchJob(context.Background(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		if store.IsTerminal(state) || state == store.JobUnknown {
			return b.Job(t, id)
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("job %s did not settle; state %s", id, state)
		}
	}
}

// Job reads a job.
func (b *Bundle) Job(t testing.TB, id string) *store.Job {
	t.Helper()
	j, err := b.Store.GetJobAny(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// OK answers every call with out.
func OK(out string) func(int, *providers.Request) providers.Step {
	return func(int, *providers.Request) providers.Step { return providers.Step{Output: out} }
}

// Hang never answers (until the call's context ends).
func Hang(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }

// AttemptOn is the job's first attempt on provider, or nil.
func AttemptOn(j *store.Job, provider string) *store.Attempt {
	for i := range j.Attempts {
		if j.Attempts[i].Provider == provider {
			return &j.Attempts[i]
		}
	}
	return nil
}
