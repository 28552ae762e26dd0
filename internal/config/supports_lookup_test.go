package config

import (
	"strings"
	"testing"
	"time"
)

// supports_lookup promises unknown attempts reconciled by lookup; only the
// openai adapter has one, so on an anthropic or scripted provider it was
// silently dropped. It is refused, as script is on a non-scripted provider.
// Found by review.
func TestSupportsLookupOnlyForOpenAI(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, p := range []string{
		"{name: c, type: anthropic, api_key_env: ANTHROPIC_API_KEY, model: claude-x, supports_lookup: true}",
		"{name: c, type: scripted, supports_lookup: true}",
	} {
		_, err := Parse([]byte("providers:\n  - " + p + "\nroutes:\n  default: {providers: [c]}\n"))
		if err == nil || !strings.Contains(err.Error(), "providers[0] (c).supports_lookup: only type openai can look a request up") {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := Parse([]byte("providers:\n  - {name: c, type: openai, base_url: \"http://127.0.0.1:1/v1\", model: m, supports_lookup: true}\nroutes:\n  default: {providers: [c]}\n")); err != nil {
		t.Errorf("openai with supports_lookup: %v", err)
	}
}

// A lookup's "no record" is trusted only after reconcile_after: shorter than
// the provider's timeout, an attempt cut before its first byte may still be
// running there, and the job would be tried again while its answer is
// coming. Unset, reconcile_after follows the longest such timeout; set
// shorter, the configuration is refused.
func TestReconcileAfterCoversLookupProvidersTimeout(t *testing.T) {
	const provider = "providers:\n  - {name: c, type: openai, base_url: \"http://127.0.0.1:1/v1\", model: m, supports_lookup: true, timeout: 5m}\nroutes:\n  default: {providers: [c]}\n"
	cfg, err := Parse([]byte(provider))
	if err != nil {
		t.Fatalf("timeout 5m, reconcile_after unset: %v", err)
	}
	if got := cfg.Execution.ReconcileAfter.D(); got != 5*time.Minute {
		t.Errorf("reconcile_after unset with a 5m lookup provider: %s, want 5m", got)
	}
	_, err = Parse([]byte("execution: {reconcile_after: 3m}\n" + provider))
	if err == nil || !strings.Contains(err.Error(), "execution.reconcile_after (3m0s) is shorter than providers[0] (c).timeout (5m0s)") {
		t.Errorf("reconcile_after 3m, lookup provider timeout 5m: %v", err)
	}
	// A provider without lookup is never asked: its timeout does not count.
	cfg, err = Parse([]byte("execution: {reconcile_after: 1m}\nproviders:\n  - {name: c, type: openai, base_url: \"http://127.0.0.1:1/v1\", model: m, timeout: 5m}\nroutes:\n  default: {providers: [c]}\n"))
	if err != nil || cfg.Execution.ReconcileAfter.D() != time.Minute {
		t.Errorf("reconcile_after 1m, no lookup: %v, %v", cfg, err)
	}
}
