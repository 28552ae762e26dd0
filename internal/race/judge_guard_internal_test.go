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

// SPEC §17: a provider cannot crash the process. Judging an answer ran
// outside the adapter's recover (call), so a panic on what a provider
// answered ended the process. It fails the attempt instead (adapter_panic,
// the race fails over), with the answer's usage, which the provider billed.
func TestJudgePanicFailsTheAttempt(t *testing.T) {
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
	created, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "judge-panic",
		Fingerprint: fp, PromptVersion: "1", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: time.Minute})
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
	sp.judge = func(*providers.Response) (json.RawMessage, []contract.Violation) { panic("judge: unexpected answer") }

	res := r.runAttempt(ctx, job, a, target, sp, nil, false, nil)
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
