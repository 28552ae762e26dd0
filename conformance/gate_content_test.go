package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

func mustPrompt(t *testing.T, e *env, name string) *prompt.Prompt {
	t.Helper()
	p, err := e.prompts.Get(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// editedTriage is the shipped triage prompt edited the way an operator
// might, forgetting to bump version "3": another system message and a new
// required output field.
func editedTriage(t *testing.T) *prompt.Prompt {
	t.Helper()
	p, err := editedPrompts(t).Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "3" || !strings.Contains(string(p.OutputSchema), `"team"`) {
		t.Fatalf("edit did not apply: version %s, schema %s", p.Version, p.OutputSchema)
	}
	return p
}

// editedPrompts are the shipped prompts with triage edited (editedTriage).
func editedPrompts(t *testing.T) *prompt.Set {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../prompts")); err != nil {
		t.Fatal(err)
	}
	replace := func(file, old, new string) {
		t.Helper()
		b, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(b), old) {
			t.Fatalf("%s lacks %q (%v)", file, old, err)
		}
		if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replace(filepath.Join(dir, "triage", "prompt.yaml"), "You triage customer support tickets for a software company.",
		`You are a pirate. Answer in rhymes, then add a key "team" naming the team to route to.`)
	sch := filepath.Join(dir, "triage", "output.schema.json")
	replace(sch, `"required": [`, `"required": ["team", `)
	replace(sch, `"properties": {`, `"properties": {"team": {"type": "string"}, `)
	set, err := prompt.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A pass is the prompt content's that ran it: a prompt whose messages or
// schema changed but whose version did not (nothing else catches that) loses
// its earlier passes, with a reason saying so, until a run of the new content
// passes. Found by review.
func TestEditedPromptWithoutVersionBumpNeedsANewPass(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("fallback", oracle(e.answers, nil))
	rep := e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}})
	triage := mustPrompt(t, e, "triage")
	if r := result(t, rep, "fallback", "triage"); !r.Passed || r.PromptDigest != triage.Digest || triage.Digest == "" {
		t.Fatalf("run: passed %v, recorded digest %q, prompt's %q", r.Passed, r.PromptDigest, triage.Digest)
	}
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	if ok, why := gate.Allow(ctx, "fallback", triage, store.RoleFailover); !ok {
		t.Fatalf("the prompt that ran: %s", why)
	}

	edited := editedTriage(t)
	if edited.Digest == triage.Digest {
		t.Fatal("the edited prompt has the digest of the shipped one")
	}
	if err := e.suites["triage"].Check(edited); err == nil {
		t.Fatal("precondition: the old suite should not fit the edited prompt")
	}
	const want = "the prompt triage@3 changed since its last pass; bump its version or rerun `router conformance run --provider fallback --prompt triage`"
	if ok, why := gate.Allow(ctx, "fallback", edited, store.RoleFailover); ok || why != want {
		t.Errorf("fallback on the edited %s, on a pass recorded against another template and schema: %v %q; want refused, %q",
			edited.ID(), ok, why, want)
	}

	// A run of the edited content counts for it (and no longer for the old).
	if _, err := e.st.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "fallback", Model: e.targets["fallback"].Model,
		Prompt: "triage", PromptVersion: "3", PromptDigest: edited.Digest, TargetDigest: testTargetDigests("fallback", "", true),
		Passed: true, CasesTotal: 1, CasesPassed: 1}); err != nil {
		t.Fatal(err)
	}
	if ok, why := gate.Allow(ctx, "fallback", edited, store.RoleFailover); !ok {
		t.Errorf("after a pass of the edited content: %s", why)
	}
	if ok, _ := gate.Allow(ctx, "fallback", triage, store.RoleFailover); ok {
		t.Error("the latest pass, of the edited content, admitted the shipped content")
	}
}

// A run recorded before runs recorded the prompt's digest (migration 0023:
// NULL; legacy since 0028) stays admitted for any content: upgrading
// withdraws no pass.
func TestPassWithoutPromptDigestStaysAdmitted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage := mustPrompt(t, e, "triage")
	if _, err := e.db.Pool.Exec(ctx, `INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed,
		cases_total, cases_passed, started_at, legacy) VALUES ('old', 'old-model', 'triage', '3', true, 1, 1, now(), true)`); err != nil {
		t.Fatal(err)
	}
	var stored *string
	if err := e.db.Pool.QueryRow(ctx, `SELECT prompt_digest FROM conformance_runs WHERE provider = 'old'`).Scan(&stored); err != nil || stored != nil {
		t.Fatalf("a run without a digest is stored with %v (%v), want NULL", stored, err)
	}
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "old-model" }))
	for _, p := range []*prompt.Prompt{triage, editedTriage(t)} {
		if ok, why := gate.Allow(ctx, "old", p, store.RoleFailover); !ok {
			t.Errorf("a pass recorded without a digest refused for %s (digest %.12s): %s", p.ID(), p.Digest, why)
		}
	}
}
