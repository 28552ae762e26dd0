package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// SPEC §6.9: every guarantee holds across router processes that share one
// database. These tests run two replicas — setup's bundle (A) and a second
// router built by replicas (B) with its own pool, store (so its own group
// commit of claims), listener, runner and scripted provider, as a second
// `router serve` has — and race requests on them. Every racer waits on one
// channel that is closed once all are started (together); a provider call
// that must be in flight when a race starts holds on a gate the race opens.
// After a race the runners are stopped (quiesce), which waits for their job
// runs to end, so a late result has recorded what it did before the database
// is read.

// peer is replica B.
type peer struct {
	url     string
	primary *providers.Scripted
	runner  *race.Runner
}

// replicas returns replica A (setup with opt) and replica B on A's database,
// whose provider answers as opt.respond within opt.timeout.
func replicas(t *testing.T, opt options) (*bundle, *peer) {
	t.Helper()
	a := setup(t, opt)
	cfg, err := pgxpool.ParseConfig(a.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st := store.New(pool, store.Options{KeyRetention: opt.retention})
	l := store.NewListener(pool, log)
	l.SkipNotificationsOf(st) // as router serve pairs them, before Run
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go l.Run(ctx)
	<-l.Ready()
	respond := opt.respond
	if respond == nil {
		respond = func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }
	}
	timeout := opt.timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	primary := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m1", Respond: respond})
	runner := race.New(race.Config{Store: st, Listener: l, Prompts: a.prompts, LeaseOwner: "replica-b", Log: log,
		Targets: map[string]*race.Target{"primary": {Provider: primary, Model: "m1", ContextWindow: 128000, Timeout: timeout}},
		Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 2, MaxAttempts: 4}}})
	srv := httptest.NewServer(api.New(api.Config{LeaseOwner: "replica-b", Lease: 30 * time.Second}, api.Deps{
		Store: st, Listener: l, Prompts: a.prompts, Routes: map[string]bool{"default": true}, Models: aliases(nil),
		Exec: runner, Log: log, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme", globexKey: "globex"}, Store: st},
	}))
	t.Cleanup(func() {
		srv.Close()
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		runner.Stop(stopCtx)
	})
	return a, &peer{url: srv.URL, primary: primary, runner: runner}
}

// together runs fns at once: each waits on one channel, closed once all are
// started. It returns when all have returned.
func together(fns ...func()) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(func() {
			<-start
			f()
		})
	}
	close(start)
	wg.Wait()
}

// call is send as acme from a racing goroutine: a transport error fails the
// test (t.Errorf, which any goroutine may call) and gives a zero reply.
func call(t *testing.T, url, method, path, body string, hdr ...string) reply {
	r, err := send(url+path, method, acmeKey, body, hdr...)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
	}
	return r
}

// quiesce stops the runners, waiting for their job runs to end: what the
// database holds afterwards is what the race left.
func quiesce(runners ...*race.Runner) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, r := range runners {
		r.Stop(ctx)
	}
}

// problemType is a problem reply's type without its URL prefix.
func problemType(r reply) string {
	typ, _ := r.body["type"].(string)
	return typ[strings.LastIndex(typ, "/")+1:]
}

// gate holds provider calls until it opens and reports each held call's job
// as it arrives (the call is then in flight) and as it answers. Shared by
// both replicas' providers, it counts calls per job across them.
type gate struct {
	open    chan struct{}
	once    sync.Once
	arrived chan string // buffered beyond any test's calls: a send never blocks
	mu      sync.Mutex
	calls   map[string]int
	answers map[string]chan struct{}
}

func newGate() *gate {
	return &gate{open: make(chan struct{}), arrived: make(chan string, 64), calls: map[string]int{}, answers: map[string]chan struct{}{}}
}

// answering is closed when job id's first held call answers, after the gate
// opened: the attempt's win is then on its way to the database.
func (g *gate) answering(id string) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.answer(id)
}

// answered closes answering(id), once.
func (g *gate) answered(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.answer(id)
	select {
	case <-c:
	default:
		close(c)
	}
}

// answer is answering's channel; g.mu is held.
func (g *gate) answer(id string) chan struct{} {
	c, ok := g.answers[id]
	if !ok {
		c = make(chan struct{})
		g.answers[id] = c
	}
	return c
}

// release opens the gate; later calls are not held. Idempotent, so a test
// defers it: a provider held past a failed test would hold the runners' Stop.
func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// respond answers each call with a valid triage once the gate is open; with
// failFirst, a job's first call answers at once with an output the triage
// schema refuses, which fails the job (its only provider answered invalid).
func (g *gate) respond(failFirst bool) func(int, *providers.Request) providers.Step {
	return func(_ int, req *providers.Request) providers.Step {
		g.mu.Lock()
		g.calls[req.JobID]++
		n := g.calls[req.JobID]
		g.mu.Unlock()
		if failFirst && n == 1 {
			return providers.Step{Output: `{"category":"nope"}`}
		}
		g.arrived <- req.JobID
		<-g.open
		g.answered(req.JobID)
		return providers.Step{Output: validTriage}
	}
}

// callsFor is the number of provider calls job id had on both replicas.
func (g *gate) callsFor(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[id]
}

// await waits until n held calls are in flight.
func (g *gate) await(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-g.arrived:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d provider calls reached the provider", i, n)
		}
	}
}

// outcome is what the database holds of a job after a race.
type outcome struct {
	state    string
	attempts int
}

// settledJob reads job id and checks that its state agrees with its attempts
// (SPEC §3, §6.5): it has ended; a succeeded job has exactly one won attempt,
// the one completed_by names; a failed or cancelled job has none and no
// completed_by; no attempt is still starting or running.
func settledJob(t *testing.T, b *bundle, id string) outcome {
	t.Helper()
	var o outcome
	var won, wonCompleted, inflight int
	var completed bool
	err := b.db.Pool.QueryRow(context.Background(), `SELECT j.state, j.completed_by IS NOT NULL,
			(SELECT count(*) FROM attempts a WHERE a.job_id = j.id),
			(SELECT count(*) FROM attempts a WHERE a.job_id = j.id AND a.state = 'won'),
			(SELECT count(*) FROM attempts a WHERE a.job_id = j.id AND a.state = 'won' AND a.id = j.completed_by),
			(SELECT count(*) FROM attempts a WHERE a.job_id = j.id AND a.state IN ('starting', 'running'))
		FROM jobs j WHERE j.id = $1`, id).Scan(&o.state, &completed, &o.attempts, &won, &wonCompleted, &inflight)
	if err != nil {
		t.Fatalf("read job %s: %v", id, err)
	}
	switch o.state {
	case store.JobSucceeded:
		if won != 1 || wonCompleted != 1 {
			t.Errorf("job %s succeeded with %d won attempts (%d of them its completed_by), want exactly its completed_by", id, won, wonCompleted)
		}
	case store.JobFailed, store.JobCancelled:
		if won != 0 || completed {
			t.Errorf("job %s %s with %d won attempts (completed_by set: %v), want none", id, o.state, won, completed)
		}
	default:
		t.Errorf("job %s is %s after the race, want it ended", id, o.state)
	}
	if inflight != 0 {
		t.Errorf("job %s is %s with %d attempts still starting or running", id, o.state, inflight)
	}
	return o
}

// keyJobs counts acme's jobs under key for operation, and the key's claims.
func keyJobs(t *testing.T, b *bundle, operation, key string) (jobs, claims int) {
	t.Helper()
	jobs = b.count(t, `SELECT count(*) FROM jobs WHERE owner = 'acme' AND operation = $1 AND idempotency_key = $2`, operation, key)
	claims = b.count(t, `SELECT count(*) FROM idempotency_keys WHERE owner = 'acme' AND operation = $1 AND idempotency_key = $2`, operation, key)
	return jobs, claims
}

// keyHolder is the job acme's key for operation is bound to.
func keyHolder(t *testing.T, b *bundle, operation, key string) string {
	t.Helper()
	var id string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT job_id::text FROM idempotency_keys
		WHERE owner = 'acme' AND operation = $1 AND idempotency_key = $2`, operation, key).Scan(&id); err != nil {
		t.Fatalf("read the claim of %q: %v", key, err)
	}
	return id
}

// createJobs creates n jobs one after another, job i on urls[i%2] (replica A
// and B in turn): a triage whose subject and Idempotency-Key are key-i, sent
// with Prefer: wait. Each reply must be status with the job in state ("" for
// any state). It returns the jobs' ids.
func createJobs(t *testing.T, urls []string, key string, n int, wait string, status int, state string) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		k := fmt.Sprintf("%s-%d", key, i)
		r := call(t, urls[i%2], "POST", "/v1/jobs", triageBody(k), "Idempotency-Key", k, "Prefer", wait)
		if r.status != status || (state != "" && r.body["state"] != state) {
			t.Fatalf("create on replica %c: %d %s, want %d with the job %q", 'A'+i%2, r.status, r.raw, status, state)
		}
		ids[i] = r.job()
	}
	return ids
}

// oneJob checks that acme's key for operation made exactly one job and one
// claim in round, and returns that job.
func oneJob(t *testing.T, b *bundle, round int, operation, key string) string {
	t.Helper()
	if jobs, claims := keyJobs(t, b, operation, key); jobs != 1 || claims != 1 {
		t.Fatalf("round %d: %d jobs and %d claims for the key in scope %s, want 1 and 1", round, jobs, claims, operation)
	}
	return keyHolder(t, b, operation, key)
}

// succeededOnce checks that job id of round succeeded with one attempt.
func succeededOnce(t *testing.T, b *bundle, round int, id string) {
	t.Helper()
	if o := settledJob(t, b, id); o.state != store.JobSucceeded || o.attempts != 1 {
		t.Errorf("round %d: job %s %s with %d attempts, want succeeded with 1", round, id, o.state, o.attempts)
	}
}

// oneCallPerJob checks that both replicas' providers were called once per
// job, jobs in all.
func oneCallPerJob(t *testing.T, a *bundle, b *peer, jobs int) {
	t.Helper()
	if calls := a.primary.Calls() + b.primary.Calls(); calls != jobs {
		t.Errorf("%d provider calls for %d jobs, want one each", calls, jobs)
	}
}
