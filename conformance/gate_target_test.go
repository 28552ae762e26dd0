package conformance_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// A pass is the target settings' that ran it: an operator who repoints
// openai-backup from api.openai.com to a self-hosted server serving a model
// of the same name keeps the target's id and model, and its pass on the old
// endpoint no longer admits it to failover, with a reason saying why, until
// a run against the new endpoint passes. A run records the digest of the
// settings it ran on, and the temperature its cases were sent at. Found by
// review.
func TestGateRefusesARepointedTargetUntilItPasses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("primary", failing)
	backup := e.add("openai-backup", oracle(e.answers, nil))
	model := e.targets["openai-backup"].Model
	onOpenAI := conformance.TargetDigests(backupConfig(t, backupOnOpenAI))
	onVLLM := conformance.TargetDigests(backupConfig(t, `type: openai, base_url: http://vllm.internal:8000/v1, api_key_env: BACKUP_KEY`))
	if onOpenAI("openai-backup", model, true) == onVLLM("openai-backup", model, true) {
		t.Fatal("precondition: the two endpoints share a digest")
	}

	temp := float32(0.3)
	rep := e.run(t, conformance.Options{Providers: []string{"openai-backup"}, PromptNames: []string{"triage"},
		TargetDigests: onOpenAI, Temperature: &temp})
	r := result(t, rep, "openai-backup", "triage")
	if !r.Passed || r.TargetDigest != onOpenAI("openai-backup", model, true) {
		t.Fatalf("run on api.openai.com: passed %v, target digest %q, want %q", r.Passed, r.TargetDigest, onOpenAI("openai-backup", model, true))
	}
	var stored string
	if err := e.db.Pool.QueryRow(ctx, `SELECT target_digest FROM conformance_runs WHERE id = $1`, r.RunID).Scan(&stored); err != nil ||
		stored != r.TargetDigest {
		t.Fatalf("stored target digest %q (%v), want %q", stored, err, r.TargetDigest)
	}
	runs, err := e.st.LatestConformanceRuns(ctx, store.ConformanceFilter{Provider: "openai-backup", WithCases: true, MaxAge: time.Hour})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v (%v)", runs, err)
	}
	var cases []conformance.CaseResult
	if err := json.Unmarshal(runs[0].Cases, &cases); err != nil || len(cases) == 0 {
		t.Fatalf("stored cases %s (%v)", runs[0].Cases, err)
	}
	triage := mustPrompt(t, e, "triage")
	for _, c := range cases {
		if c.Sampling == nil || c.Sampling.Temperature != temp || c.Sampling.MaxTokens != triage.MaxTokens {
			t.Errorf("case %s stored sampling %+v, want temperature %v and max_tokens %d", c.Name, c.Sampling, temp, triage.MaxTokens)
		}
	}

	gate := func(digestOf func(target, model string, ownMaxTokens bool) string) *conformance.Gate {
		return conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
			conformance.TargetModels(func(id string) string { return e.targets[id].Model }), conformance.TargetSettings(digestOf))
	}
	unchanged, repointed := gate(onOpenAI), gate(onVLLM)
	if ok, why := unchanged.Allow(ctx, "openai-backup", triage, store.RoleFailover); !ok {
		t.Fatalf("the endpoint that ran: %s", why)
	}
	const want = "the endpoint or settings of target openai-backup changed since its last pass on triage@3 " +
		"(its provider's type, base_url or request settings); run `router conformance run --provider openai-backup --prompt triage`"
	if ok, why := repointed.Allow(ctx, "openai-backup", triage, store.RoleFailover); ok || why != want {
		t.Fatalf("repointed to a server that never ran the suite: %v %q; want refused, %q", ok, why, want)
	}
	// At run time: the primary fails and the repointed backup is not tried.
	e.startRunner(t, repointed)
	calls := backup.Calls()
	if j := e.job(t); j.State != store.JobFailed || attemptsBy(j, "openai-backup") != 0 || backup.Calls() != calls {
		t.Fatalf("the repointed backup took failover: job ended %s with attempts %+v", j.State, j.Attempts)
	}

	// A run against the new endpoint counts for it, and no longer for the old.
	rep = e.run(t, conformance.Options{Providers: []string{"openai-backup"}, PromptNames: []string{"triage"}, TargetDigests: onVLLM})
	if r := result(t, rep, "openai-backup", "triage"); !r.Passed || r.TargetDigest != onVLLM("openai-backup", model, true) {
		t.Fatalf("run on the new endpoint: passed %v, digest %q", r.Passed, r.TargetDigest)
	}
	if ok, why := repointed.Allow(ctx, "openai-backup", triage, store.RoleFailover); !ok {
		t.Errorf("after a pass on the new endpoint: %s", why)
	}
	if ok, _ := unchanged.Allow(ctx, "openai-backup", triage, store.RoleFailover); ok {
		t.Error("the latest pass, on the new endpoint, admitted the old one")
	}
}

// A run recorded before runs recorded the target's digest (migration 0024:
// NULL; legacy since 0028) stays admitted whatever the target's settings:
// upgrading withdraws no pass. A gate not told the targets' settings counts
// runs on any.
func TestGateAdmitsAPassWithoutTargetDigest(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage := mustPrompt(t, e, "triage")
	if _, err := e.db.Pool.Exec(ctx, `INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed,
		cases_total, cases_passed, started_at, prompt_digest, legacy) VALUES ('openai-backup', 'gpt-4o-mini', 'triage', '3', true, 1, 1, now(), $1, true)`,
		triage.Digest); err != nil {
		t.Fatal(err)
	}
	var stored *string
	if err := e.db.Pool.QueryRow(ctx, `SELECT target_digest FROM conformance_runs WHERE provider = 'openai-backup'`).Scan(&stored); err != nil || stored != nil {
		t.Fatalf("a run without a target digest is stored with %v (%v), want NULL", stored, err)
	}
	onVLLM := conformance.TargetDigests(backupConfig(t, `type: openai, base_url: http://vllm.internal:8000/v1, api_key_env: BACKUP_KEY`))
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "gpt-4o-mini" }), conformance.TargetSettings(onVLLM))
	if ok, why := gate.Allow(ctx, "openai-backup", triage, store.RoleFailover); !ok {
		t.Errorf("a pass recorded without a target digest refused: %s", why)
	}

	// A pass with a digest, judged by a gate that does not know the settings.
	onOpenAI := conformance.TargetDigests(backupConfig(t, backupOnOpenAI))
	if _, err := e.st.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "other", Model: "gpt-4o-mini", Prompt: "triage",
		PromptVersion: "3", PromptDigest: triage.Digest, TargetDigest: onOpenAI("openai-backup", "", true), Passed: true, CasesTotal: 1, CasesPassed: 1}); err != nil {
		t.Fatal(err)
	}
	blind := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "gpt-4o-mini" }))
	if ok, why := blind.Allow(ctx, "other", triage, store.RoleFailover); !ok {
		t.Errorf("a gate without TargetSettings refused a pass with a digest: %s", why)
	}
}
