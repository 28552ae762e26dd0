package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// A run without digests counts for any prompt content and target settings
// only when it is legacy (recorded before migration 0028). An older router
// binary (a CI image pinned to an older release) that keeps inserting runs
// without digests cannot record them, and so cannot admit a target for an
// edited prompt or a repointed target.
func TestGateIgnoresDigestlessRunsOfAnOlderBinary(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage := mustPrompt(t, e, "triage")
	_, err := e.db.Pool.Exec(ctx, `INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed,
		cases_total, cases_passed, cases, suite_digest, router_version, started_at)
		VALUES ('backup', 'gpt-4o-mini', 'triage', '3', true, 10, 10, '[]', '', 'v0.9-old-ci', now())`)
	if err == nil || !strings.Contains(err.Error(), "conformance_runs_digests_required_upgrade_router") {
		t.Errorf("an older binary's run without digests was recorded (%v)", err)
	}
	edited := *triage
	edited.Digest = strings.Repeat("e", 64)
	g := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "gpt-4o-mini" }),
		conformance.TargetSettings(func(string, string, bool) string { return strings.Repeat("f", 64) }))
	if ok, _ := g.Allow(ctx, "backup", &edited, store.RoleFailover); ok {
		t.Fatal("a run recorded today without digests admitted an edited prompt on a repointed target")
	}
}

// A slow pass that started before an operator's failing run, and was
// recorded after it, does not re-admit the target: the failure tested it
// while the pass ran.
func TestGateRefusesAPassOverlappedByAFailingRun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage := mustPrompt(t, e, "triage")
	run := func(passed bool, took time.Duration) {
		t.Helper()
		r := store.NewConformanceRun{Provider: "backup", Model: "backup-model", Prompt: "triage", PromptVersion: "3",
			Passed: passed, CasesTotal: 2, CasesPassed: 2, Duration: took,
			PromptDigest: triage.Digest, TargetDigest: testTargetDigests("backup", "backup-model", true)}
		if !passed {
			r.CasesPassed = 1
		}
		if _, err := e.st.RecordConformanceRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	run(false, time.Second)
	run(true, 20*time.Minute)
	g := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "backup-model" }))
	if ok, why := g.Allow(ctx, "backup", triage, store.RoleFailover); ok || !strings.Contains(why, "failed (1 of 2 cases passed)") {
		t.Fatalf("a pass overlapped by a failing run: %v %q, want refused for the failure", ok, why)
	}
}
