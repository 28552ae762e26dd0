package ops

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// ConformancePass records a passing conformance run of the triage prompt,
// version 2, for provider with model, against the prompt content promptDigest
// and the target settings targetDigest ("" records none: a legacy run,
// recorded before migration 0028, the only kind that may lack a digest).
type ConformancePass func(provider, model, promptDigest, targetDigest string)

// ConformanceFixture is the conformance views' tests' setup: a database of
// their own, the project's prompts, the triage prompt, and a way to record
// passes. (Exported for the external tests of the package.)
func ConformanceFixture(t *testing.T) (*testdb.DB, *prompt.Set, *prompt.Prompt, ConformancePass) {
	t.Helper()
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	triage, _ := prompts.Get("triage", "")
	pass := func(provider, model, promptDigest, targetDigest string) {
		t.Helper()
		if promptDigest == "" || targetDigest == "" {
			if _, err := db.Pool.Exec(context.Background(), `INSERT INTO conformance_runs (provider, model, prompt, prompt_version,
				passed, cases_total, cases_passed, started_at, prompt_digest, target_digest, legacy)
				VALUES ($1, $2, 'triage', '3', true, 1, 1, now(), NULLIF($3, ''), NULLIF($4, ''), true)`,
				provider, model, promptDigest, targetDigest); err != nil {
				t.Fatal(err)
			}
			return
		}
		if _, err := db.Store.RecordConformanceRun(context.Background(), store.NewConformanceRun{Provider: provider, Model: model,
			Prompt: "triage", PromptVersion: "3", PromptDigest: promptDigest, TargetDigest: targetDigest,
			Passed: true, CasesTotal: 1, CasesPassed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	return db, prompts, triage, pass
}
