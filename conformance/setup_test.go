package conformance_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// validTriage answers job inputs that are not suite cases.
const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`

// answers maps the rendered last message of every suite case to its case, so
// test doubles can answer each case with its reference reply.
type answers map[string]answer

type answer struct {
	prompt    string
	caseName  string
	index     int // the case's position in its suite
	reference string
}

func suiteAnswers(t *testing.T, ps *prompt.Set, ss conformance.Suites) answers {
	t.Helper()
	out := answers{}
	for _, name := range ss.Names() {
		p, err := ps.Get(name, "")
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range ss[name].Cases {
			msgs, err := p.Render(c.InputJSON())
			if err != nil {
				t.Fatal(err)
			}
			out[msgs[len(msgs)-1].Content] = answer{prompt: name, caseName: c.Name, index: i, reference: c.ReferenceJSON()}
		}
	}
	return out
}

// lookup finds the case of a request by its last message.
func (a answers) lookup(msgs []providers.Message) (answer, bool) {
	if len(msgs) == 0 {
		return answer{}, false
	}
	ans, ok := a[msgs[len(msgs)-1].Content]
	return ans, ok
}

// oracle answers suite cases with their reference (changed by mutate when
// non-nil) and anything else with validTriage.
func oracle(a answers, mutate func(ans answer, ref map[string]any)) func(int, *providers.Request) providers.Step {
	return func(_ int, req *providers.Request) providers.Step {
		ans, ok := a.lookup(req.Messages)
		if !ok {
			return providers.Step{Output: validTriage}
		}
		if mutate == nil {
			return providers.Step{Output: ans.reference}
		}
		var ref map[string]any
		if err := json.Unmarshal([]byte(ans.reference), &ref); err != nil {
			panic(err)
		}
		mutate(ans, ref)
		b, _ := json.Marshal(ref)
		return providers.Step{Output: string(b)}
	}
}

func failing(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }

// env is a test database with scripted providers, the shipped prompts and
// suites, and (after startRunner) a race runner gated by conformance.
type env struct {
	db       *testdb.DB
	st       *store.Store
	prompts  *prompt.Set
	suites   conformance.Suites
	answers  answers
	targets  map[string]*race.Target
	scripted map[string]*providers.Scripted
	order    []string
	runner   *race.Runner
	listener *store.Listener
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := testdb.New(t, store.Options{})
	e := &env{db: db, st: db.Store, prompts: loadPrompts(t), suites: loadSuites(t),
		targets: map[string]*race.Target{}, scripted: map[string]*providers.Scripted{}}
	e.answers = suiteAnswers(t, e.prompts, e.suites)
	return e
}

// add configures a scripted provider; route order is the order of add.
func (e *env) add(name string, respond func(int, *providers.Request) providers.Step) *providers.Scripted {
	p := providers.NewScripted(providers.ScriptedConfig{Name: name, Model: name + "-model", Respond: respond})
	e.scripted[name] = p
	e.targets[name] = &race.Target{Provider: p, Model: name + "-model", ContextWindow: 128000, Timeout: time.Minute}
	e.order = append(e.order, name)
	return p
}

func (e *env) run(t *testing.T, opt conformance.Options) *conformance.Report {
	t.Helper()
	opt.Store, opt.Targets, opt.Prompts, opt.Suites = e.st, e.targets, e.prompts, e.suites
	if opt.RouterVersion == "" {
		opt.RouterVersion = "test"
	}
	if opt.TargetDigests == nil {
		opt.TargetDigests = testTargetDigests
	}
	rep, err := conformance.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// startRunner starts a race runner over every provider added, in order, with
// gate.
func (e *env) startRunner(t *testing.T, gate race.Gate) { e.startRunnerOn(t, gate, "") }

// startRunnerOn is startRunner with the route's conformance_prompt (chat jobs
// are gated on it; "" for none).
func (e *env) startRunnerOn(t *testing.T, gate race.Gate, conformancePrompt string) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.listener = store.NewListener(e.db.Pool, log)
	ctx, cancel := context.WithCancel(context.Background())
	go e.listener.Run(ctx)
	<-e.listener.Ready()
	route := &race.Route{Providers: e.order, MaxInflight: 2, MaxAttempts: 4, ConformancePrompt: conformancePrompt}
	e.runner = race.New(race.Config{
		Store: e.st, Listener: e.listener, Prompts: e.prompts, Targets: e.targets,
		Routes: map[string]*race.Route{"default": route}, LeaseOwner: "test-runner", Lease: 30 * time.Second, Log: log,
		Backoff: race.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond}, Gate: gate,
	})
	t.Cleanup(func() {
		sctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
		defer stop()
		e.runner.Stop(sctx)
		cancel()
	})
}

// testTargetDigests stands for the configuration's target digests
// (conformance.TargetDigests) in runs of targets made without one: a digest
// of the target's id and model (whether requests set max_tokens does not
// change it, as for a provider other than Anthropic). Every recorded run
// records one.
func testTargetDigests(target, model string, _ bool) string {
	sum := sha256.Sum256([]byte("test-target\x00" + target + "\x00" + model))
	return hex.EncodeToString(sum[:])
}

var keySeq atomic.Int64

// job submits a triage job and waits (on the database's notifications) until it
// settles.
func (e *env) job(t *testing.T) *store.Job {
	t.Helper()
	ctx := context.Background()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	job, created, err := e.st.CreateJob(ctx, store.NewJob{
		Owner: "acme", Operation: "triage", IdempotencyKey: "key-" + time.Now().Format("150405") + "-" + string(rune('a'+keySeq.Add(1))),
		Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second,
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	return e.settle(t, job)
}

// settle submits job to the runner (startRunner) and waits, on the database's
// notifications, until it settles.
func (e *env) settle(t *testing.T, job *store.Job) *store.Job {
	t.Helper()
	ctx := context.Background()
	changed, unsubscribe := e.listener.Subscribe(job.ID)
	defer unsubscribe()
	e.runner.Submit(job)
	timeout := time.After(60 * time.Second)
	for {
		j, err := e.st.GetJobAny(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if store.IsTerminal(j.State) || j.State == store.JobUnknown {
			return j
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("job %s did not settle; state %s", job.ID, j.State)
		}
	}
}

func attemptsBy(j *store.Job, provider string) int {
	n := 0
	for _, a := range j.Attempts {
		if a.Provider == provider {
			n++
		}
	}
	return n
}

func winner(j *store.Job) string {
	for _, a := range j.Attempts {
		if j.CompletedBy != nil && a.ID == *j.CompletedBy {
			return a.Provider
		}
	}
	return ""
}

func result(t *testing.T, rep *conformance.Report, provider, promptName string) conformance.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Provider == provider && r.Prompt == promptName {
			return r
		}
	}
	t.Fatalf("no result for %s on %s", provider, promptName)
	return conformance.Result{}
}
