package race

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// judgeBundle is a runner with one prompt job whose primary attempt is
// running on a scripted target that answers validly, ready for runAttempt.
type judgeBundle struct {
	db     *testdb.DB
	r      *Runner
	job    *store.Job
	a      *store.Attempt
	target *Target
	sp     *spec
}

// judgeSetup is a judgeBundle whose job has the idempotency key key.
func judgeSetup(t *testing.T, key string) judgeBundle {
	t.Helper()
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir(filepath.Join("..", "..", "prompts"))
	if err != nil {
		t.Fatal(err)
	}
	const answer = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`
	target := &Target{Model: "p-model", ContextWindow: 128000, Timeout: time.Minute,
		Provider: providers.NewScripted(providers.ScriptedConfig{Name: "p", Steps: []providers.Step{{Output: answer}}})}
	route := &Route{Providers: []string{"p"}, MaxInflight: 2, MaxAttempts: 4}
	r := New(Config{Store: db.Store, Prompts: prompts, Targets: map[string]*Target{"p": target},
		Routes: map[string]*Route{"default": route}, LeaseOwner: "test-runner"})

	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	created, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: key,
		Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Store.CreateAttempt(ctx, store.NewAttempt{JobID: created.ID, Provider: "p", Model: "p-model", Role: store.RolePrimary, LeaseOwner: "test-runner"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	job, err := db.Store.GetJobToRun(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := r.specFor(job, route)
	if err != nil {
		t.Fatal(err)
	}
	return judgeBundle{db: db, r: r, job: job, a: a, target: target, sp: sp}
}

// SPEC §17: a provider cannot crash the process. Judging an answer ran
// outside the adapter's recover (call), so a panic on what a provider
// answered ended the process. It fails the attempt instead (adapter_panic,
// the race fails over), with the answer's usage, which the provider billed.
func TestJudgePanicFailsTheAttempt(t *testing.T) {
	ctx := context.Background()
	b := judgeSetup(t, "judge-panic")
	db, job, sp := b.db, b.job, b.sp
	sp.judge = func(*providers.Response) (json.RawMessage, []contract.Violation) { panic("judge: unexpected answer") }

	res := b.r.runAttempt(ctx, job, b.a, b.target, sp, nil, false, nil)
	if res.state != store.AttemptFailed || res.err == nil || res.err.Kind != providers.KindAdapterPanic || res.usage.TotalTokens == 0 {
		t.Fatalf("result %s (%+v), usage %+v: want failed, adapter_panic, with the answer's usage", res.state, res.err, res.usage)
	}
	stored, err := db.Store.GetJobAny(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Kind string `json:"kind"`
	}
	got := stored.Attempts[0]
	if err := json.Unmarshal(got.Error, &e); err != nil || got.State != store.AttemptFailed || e.Kind != string(providers.KindAdapterPanic) || len(got.Usage) == 0 {
		t.Fatalf("stored attempt %s, error %s, usage %s: want failed, adapter_panic, with usage", got.State, got.Error, got.Usage)
	}
}

// An answer that could not be judged fails its attempt with the answer's
// usage (unjudged); the metrics count that usage (res.usage, counted by the
// orchestrator in router_cost_usd_total and the token counters) only when it
// was stored, as for an invalid answer. Here another hand settles the
// attempt, with usage of its own, while the answer is being judged:
// unjudged's record is not written, the stored usage stays the other hand's,
// and the result carries no usage, so the metrics and the job's cost_usd
// agree.
func TestUnjudgedAnswerOnASettledAttemptCountsNoUsage(t *testing.T) {
	ctx := context.Background()
	b := judgeSetup(t, "judge-panic-settled")
	db, job, sp := b.db, b.job, b.sp
	// The other hand's record: failed, with usage of its own (7 tokens).
	theirs := providers.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7}
	sp.judge = func(*providers.Response) (json.RawMessage, []contract.Violation) {
		if err := db.Store.FinishAttempt(ctx, b.a.ID, store.AttemptOutcome{State: store.AttemptFailed,
			Error: map[string]any{"kind": "settled_elsewhere"}, Usage: theirs}); err != nil {
			t.Errorf("settling the attempt: %v", err)
		}
		panic("judge: unexpected answer")
	}

	res := b.r.runAttempt(ctx, job, b.a, b.target, sp, nil, false, nil)
	if res.state != store.AttemptFailed || res.err == nil || res.err.Kind != providers.KindAdapterPanic {
		t.Fatalf("result %s (%+v): want failed, adapter_panic", res.state, res.err)
	}
	if res.usage != (providers.Usage{}) {
		t.Errorf("result usage %+v: want none, since the attempt's record (and usage) was not written", res.usage)
	}
	stored, err := db.Store.GetJobAny(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var u providers.Usage
	if err := json.Unmarshal(stored.Attempts[0].Usage, &u); err != nil || u != theirs {
		t.Fatalf("stored usage %s: want the other hand's %+v kept", stored.Attempts[0].Usage, theirs)
	}
}
