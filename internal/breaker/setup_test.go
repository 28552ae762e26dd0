package breaker_test

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
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`

// raceBundle is a runner on a real database with scripted providers, as in
// internal/race's tests, plus an Admission and an Observer.
type raceBundle struct {
	db       *testdb.DB
	st       *store.Store
	runner   *race.Runner
	listener *store.Listener
	prov     map[string]*providers.Scripted
	stopped  bool
}

type provSpec struct {
	name    string
	respond func(call int, req *providers.Request) providers.Step
	onCall  func(call int, req *providers.Request)
}

func setupRace(t *testing.T, route race.Route, adm race.Admission, obs race.Observer, specs ...provSpec) *raceBundle {
	t.Helper()
	db := testdb.New(t, store.Options{})
	return setupRaceOn(t, db, "test-runner", route, adm, obs, specs...)
}

func setupRaceOn(t *testing.T, db *testdb.DB, owner string, route race.Route, adm race.Admission, obs race.Observer, specs ...provSpec) *raceBundle {
	t.Helper()
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	b := &raceBundle{db: db, st: db.Store, prov: map[string]*providers.Scripted{}}
	targets := map[string]*race.Target{}
	for _, s := range specs {
		p := providers.NewScripted(providers.ScriptedConfig{Name: s.name, Model: s.name + "-model", Respond: s.respond, OnCall: s.onCall})
		b.prov[s.name] = p
		targets[s.name] = &race.Target{Provider: p, Model: s.name + "-model", ContextWindow: 128000, Timeout: time.Minute}
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
		Routes: map[string]*race.Route{"default": &route}, LeaseOwner: owner, Lease: 30 * time.Second, Log: log,
		Backoff: race.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond}, Admission: adm, Observer: obs,
	})
	t.Cleanup(func() {
		b.stop()
		cancel()
	})
	return b
}

func (b *raceBundle) stop() {
	if b.stopped {
		return
	}
	b.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.runner.Stop(ctx)
}

var keySeq atomic.Int64

// submit creates a triage job and hands it to the runner.
func (b *raceBundle) submit(t *testing.T) *store.Job {
	t.Helper()
	key := fmt.Sprintf("key-%d", keySeq.Add(1))
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	job, created, err := b.st.CreateJob(context.Background(), store.NewJob{
		Owner: "acme", Operation: "triage", IdempotencyKey: key, Fingerprint: fp,
		PromptVersion: "1", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second,
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	b.runner.Submit(job)
	return job
}

// waitSettled waits (on the database's notifications) until the job is
// terminal or unknown.
func (b *raceBundle) waitSettled(t *testing.T, id string) *store.Job {
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

func ok(out string) func(int, *providers.Request) providers.Step {
	return func(int, *providers.Request) providers.Step { return providers.Step{Output: out} }
}
