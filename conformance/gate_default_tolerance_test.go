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

// invoiceEdited is the shipped invoice prompt (version unchanged) with its
// prompt.yaml's text old replaced by new.
func invoiceEdited(t *testing.T, old, new string) *prompt.Prompt {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../prompts")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "invoice", "prompt.yaml")
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q (%v)", file, old, err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := prompt.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Get("invoice", "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Leaving out a sum rule's `tolerance: 0.01` (the default), or writing it on
// a product rule, judges as before: the gate still admits a pass recorded
// against the shipped content (docs/conformance.md: writing a default does
// not count). Another tolerance is a change of content.
func TestGateCountsAPassAcrossTheDefaultTolerance(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	shipped := mustPrompt(t, e, "invoice")
	if _, err := e.st.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "fallback", Model: "m",
		Prompt: "invoice", PromptVersion: shipped.Version, PromptDigest: shipped.Digest, TargetDigest: testTargetDigests("fallback", "", true),
		Passed: true, CasesTotal: 1, CasesPassed: 1}); err != nil {
		t.Fatal(err)
	}
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "m" }))
	const sum = "      total: /total\n      tolerance: 0.01\n"
	const product = "      factors: [quantity, unit_price]\n"
	for what, p := range map[string]*prompt.Prompt{
		"sum's default left out":    invoiceEdited(t, sum, "      total: /total\n"),
		"product's default written": invoiceEdited(t, product, product+"      tolerance: 0.01\n"),
		"product's default as 1e-2": invoiceEdited(t, product, product+"      tolerance: 1e-2\n"),
	} {
		if ok, why := gate.Allow(ctx, "fallback", p, store.RoleFailover); !ok {
			t.Errorf("%s: the pass of the shipped content refused: %s", what, why)
		}
	}
	other := invoiceEdited(t, sum, "      total: /total\n      tolerance: 0.02\n")
	if ok, why := gate.Allow(ctx, "fallback", other, store.RoleFailover); ok || !strings.Contains(why, "changed since its last pass") {
		t.Errorf("sum's tolerance 0.02: %v %q; want refused, the prompt changed", ok, why)
	}
}
