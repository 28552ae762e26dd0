package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// An operator whose backup failed the suite on api.openai.com repoints it to
// a self-hosted server (a new base_url). The gate refuses it (right: nothing
// ran on the new endpoint), but its reason reads as if the new endpoint had
// failed — "last conformance run for triage@3 failed (3 of 10 cases passed)"
// — and names no command, while for a pass on the old endpoint it says "the
// endpoint or settings of target … changed …; run `router conformance run
// …`", and GET /v1/conformance says that of this very failing run too
// (internal/ops runJudge). The failure was recorded on settings the target no
// longer has: the reason must say so and name the run that admits it.
func TestGateReasonForAFailureOnOldSettings(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage := mustPrompt(t, e, "triage")
	onOpenAI := conformance.TargetDigests(backupConfig(t, backupOnOpenAI))
	onVLLM := conformance.TargetDigests(backupConfig(t, `type: openai, base_url: http://vllm.internal:8000/v1, api_key_env: BACKUP_KEY`))
	record := func(passed bool, digest string) {
		t.Helper()
		n := 3
		if passed {
			n = 10
		}
		if _, err := e.st.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "openai-backup", Model: "gpt-4o-mini", Prompt: "triage",
			PromptVersion: "3", PromptDigest: triage.Digest, TargetDigest: digest, Passed: passed, CasesTotal: 10, CasesPassed: n}); err != nil {
			t.Fatal(err)
		}
	}
	repointed := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "gpt-4o-mini" }), conformance.TargetSettings(onVLLM))
	const command = "`router conformance run --provider openai-backup --prompt triage`"

	// Never passed; its one run failed on the old endpoint.
	record(false, onOpenAI("openai-backup", "", true))
	ok, why := repointed.Allow(ctx, "openai-backup", triage, store.RoleFailover)
	if ok {
		t.Fatal("admitted on a failing run")
	}
	if !strings.Contains(why, "changed") || !strings.Contains(why, command) {
		t.Errorf("only run failed on the old endpoint: reason %q does not say the endpoint changed since that run, nor name %s", why, command)
	}

	// Passed, then failed, both on the old endpoint.
	record(true, onOpenAI("openai-backup", "", true))
	record(false, onOpenAI("openai-backup", "", true))
	_, why = repointed.Allow(ctx, "openai-backup", triage, store.RoleFailover)
	if !strings.Contains(why, "changed") || !strings.Contains(why, command) {
		t.Errorf("latest run failed on the old endpoint: reason %q does not say the endpoint changed since that run, nor name %s", why, command)
	}
}
