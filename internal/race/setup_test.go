package race_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`
const otherTriage = `{"category":"account","priority":"normal","summary":"Primary's slower answer about the login.","needs_human":true}`

type bundle struct {
	db       *testdb.DB
	st       *store.Store
	runner   *race.Runner
	listener *store.Listener
	prov     map[string]*providers.Scripted
	stopped  bool
}

// provSpec configures one scripted provider of the test route.
type provSpec struct {
	name       string
	respond    func(call int, req *providers.Request) providers.Step
	onCall     func(call int, req *providers.Request)
	timeout    time.Duration
	maxRetries int
}

func setup(t *testing.T, route race.Route, specs ...provSpec) *bundle {
	t.Helper()
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{db: db, st: db.Store, prov: map[string]*providers.Scripted{}}
	targets := map[string]*race.Target{}
	for _, s := range specs {
		p := providers.NewScripted(providers.ScriptedConfig{Name: s.name, Model: s.name + "-model", Respond: s.respond, OnCall: s.onCall})
		b.prov[s.name] = p
		timeout := s.timeout
		if timeout == 0 {
			timeout = time.Minute
		}
		targets[s.name] = &race.Target{Provider: p, Model: s.name + "-model", ContextWindow: 128000, Timeout: timeout, MaxRetries: s.maxRetries}
		route.Providers = append(route.Providers, s.name)
	}
	if route.MaxInflight == 0 {
		route.MaxInflight = 2
	}
	if route.MaxAttempts == 0 {
		route.MaxAttempts = 4
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b.listener = store.NewListener(db.Pool, log)
	ctx, cancel := context.WithCancel(context.Background())
	go b.listener.Run(ctx)
	<-b.listener.Ready()
	b.runner = race.New(race.Config{
		Store: db.Store, Listener: b.listener, Prompts: prompts, Targets: targets,
		Routes: map[string]*race.Route{"default": &route}, LeaseOwner: "test-runner", Lease: 30 * time.Second, Log: log,
		Backoff: race.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond}, ReconcileAfter: time.Nanosecond,
	})
	t.Cleanup(func() {
		b.stop()
		cancel()
	})
	return b
}

// stop waits for every running job of the runner to end.
func (b *bundle) stop() {
	if b.stopped {
		return
	}
	b.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.runner.Stop(ctx)
}

var keySeq struct {
	sync.Mutex
	n int
}

// submit creates a triage job and hands it to the runner.
func (b *bundle) submit(t *testing.T) *store.Job {
	t.Helper()
	job := b.submitWithoutRunning(t, "test-runner")
	b.runner.Submit(job)
	return job
}

// submitWithoutRunning creates a triage job whose lease is held by leaseOwner.
func (b *bundle) submitWithoutRunning(t *testing.T, leaseOwner string) *store.Job {
	t.Helper()
	keySeq.Lock()
	keySeq.n++
	key := "key-" + time.Now().Format("150405.000000") + "-" + string(rune('a'+keySeq.n%26))
	keySeq.Unlock()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	job, created, err := b.st.CreateJob(context.Background(), store.NewJob{
		Owner: "acme", Operation: "triage", IdempotencyKey: key, Fingerprint: fp,
		PromptVersion: "1", Route: "default", Input: input, LeaseOwner: leaseOwner, LeaseFor: 30 * time.Second,
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	return job
}

// waitSettled waits (on the database's notifications) until the job is
// terminal or unknown.
func (b *bundle) waitSettled(t *testing.T, id string) *store.Job {
	t.Helper()
	changed, unsubscribe := b.listener.Subscribe(id)
	defer unsubscribe()
	timeout := time.After(60 * time.Second)
	for {
		j, err := b.st.GetJobAny(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if store.IsTerminal(j.State) || j.State == store.JobUnknown {
			return j
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("job %s did not settle; state %s", id, j.State)
		}
	}
}

func (b *bundle) job(t *testing.T, id string) *store.Job {
	t.Helper()
	j, err := b.st.GetJobAny(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func ok(out string) func(int, *providers.Request) providers.Step {
	return func(int, *providers.Request) providers.Step { return providers.Step{Output: out} }
}

func hang(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }

func attemptBy(j *store.Job, provider string) *store.Attempt {
	for i := range j.Attempts {
		if j.Attempts[i].Provider == provider {
			return &j.Attempts[i]
		}
	}
	return nil
}
