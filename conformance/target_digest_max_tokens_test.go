package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

// claudeConfig is a configuration whose Anthropic provider claude sends
// maxTokens (0: the adapter's default) to requests that set none, beside one
// that never sets it and an OpenAI provider.
func claudeConfig(t *testing.T, maxTokens int) *config.Config {
	t.Helper()
	setting := ""
	if maxTokens > 0 {
		setting = fmt.Sprintf(", max_tokens: %d", maxTokens)
	}
	cfg, err := config.Parse(fmt.Appendf(nil, `database_url: postgres://unused
providers:
  - {name: claude, type: anthropic, api_key_env: K, model: claude-test%s}
  - {name: claude-default, type: anthropic, api_key_env: K, model: claude-test}
  - {name: openai-backup, type: openai, base_url: https://api.openai.com/v1, api_key_env: OK, model: gpt-4o-mini}
routes:
  default: {providers: [claude, claude-default, openai-backup]}
`, setting))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The digests every run recorded before requests that set their own
// max_tokens got a digest of their own, pinned: they stay the digests of
// requests that set none, and of every request to a provider other than
// Anthropic, so no such pass is withdrawn.
const (
	claude8192Before    = "989c10316413c78a88389f0121d28c89378a1577138e2fbe6853203bf4ace20a" // claude, max_tokens: 8192
	claudeDefaultBefore = "e7bf6ed6d33ba7172c3912aaf744001f7f19df110061e145cb1c7c5a7ffe1b72" // claude-default (4096)
	openAIBefore        = "27f63f0d86f81f703e385d72d6920a9d08fc1b884dae13010fc52a119ad439ba" // openai-backup
)

// For requests that set their own max_tokens an Anthropic provider's
// max_tokens is never sent, so it is no part of their digest; for requests
// that set none, and for the other types, the digest is what it always was.
func TestConformanceTargetDigestLeavesOutAnUnsentMaxTokens(t *testing.T) {
	d := conformance.TargetDigests(claudeConfig(t, 8192))
	for _, c := range []struct{ target, want string }{
		{"claude", claude8192Before}, {"claude-default", claudeDefaultBefore}, {"openai-backup", openAIBefore},
	} {
		if got := d(c.target, "", false); got != c.want {
			t.Errorf("%s for requests without max_tokens: digest %s, want %s as before", c.target, got, c.want)
		}
	}
	if got := d("openai-backup", "", true); got != openAIBefore {
		t.Errorf("openai-backup for requests with their own max_tokens: digest %s, want %s as before (only Anthropic sends a max_tokens of its own)", got, openAIBefore)
	}
	own := d("claude", "", true)
	if own == claude8192Before {
		t.Error("claude for requests with their own max_tokens: the digest still holds the provider's max_tokens")
	}
	if other := d("claude-default", "", true); own != other {
		t.Errorf("for requests with their own max_tokens, a provider's max_tokens of 8192 (%s) and the default (%s) give two digests", own, other)
	}
	if raised := conformance.TargetDigests(claudeConfig(t, 16384))("claude", "", true); raised != own {
		t.Errorf("raising claude's max_tokens changed the digest of requests with their own: %s, was %s", raised, own)
	}
	if other := d("claude", "claude-other", true); other == own {
		t.Error("another model left the digest of requests with their own max_tokens as it was")
	}
}

// A pass recorded before the upgrade holds the digest of then, with an
// Anthropic provider's max_tokens in it: on the same settings the gate still
// counts it for a prompt that sets its own max_tokens (triage: 300), so an
// upgrade withdraws no pass, while what a run records now leaves that
// max_tokens out. The older form counts only while it matches the settings of
// now, and never for requests that send the provider's max_tokens unless it
// holds that value.
func TestConformanceGateCountsAPassRecordedBeforeTheMaxTokensMarker(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage := mustPrompt(t, e, "triage")
	if triage.MaxTokens == 0 {
		t.Fatal("precondition: triage sets its own max_tokens")
	}
	record := func(digest string) {
		t.Helper()
		if _, err := e.st.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "claude", Model: "claude-test", Prompt: "triage",
			PromptVersion: triage.Version, PromptDigest: triage.Digest, TargetDigest: digest, Passed: true, CasesTotal: 10, CasesPassed: 10}); err != nil {
			t.Fatal(err)
		}
	}
	gate := func(cfg *config.Config) *conformance.Gate {
		return conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
			conformance.TargetModels(func(string) string { return "claude-test" }), conformance.TargetSettings(conformance.TargetDigests(cfg)))
	}
	upgraded := gate(claudeConfig(t, 8192))
	noOwn := *triage // a prompt whose requests send the provider's max_tokens
	noOwn.MaxTokens = 0

	record(claude8192Before) // as `router conformance run` recorded it before the upgrade
	if ok, why := upgraded.Allow(ctx, "claude", triage, store.RoleFailover); !ok {
		t.Errorf("the upgrade withdrew claude's pass on triage, recorded on the settings of now: %s", why)
	}
	if ok, _ := upgraded.Allow(ctx, "claude", &noOwn, store.RoleFailover); !ok {
		t.Error("the upgrade withdrew claude's pass for requests that send its max_tokens, recorded with that max_tokens")
	}
	if ok, _ := gate(claudeConfig(t, 16384)).Allow(ctx, "claude", triage, store.RoleFailover); ok {
		t.Error("a pass of the older form admitted claude on settings it was not recorded against (max_tokens 16384, recorded at 8192)")
	}

	// A run now records the form without the provider's max_tokens, which a
	// prompt that sends it does not count.
	record(conformance.TargetDigests(claudeConfig(t, 8192))("claude", "claude-test", true))
	if ok, why := gate(claudeConfig(t, 16384)).Allow(ctx, "claude", triage, store.RoleFailover); !ok {
		t.Errorf("a pass recorded now was withdrawn by raising a max_tokens triage never sends: %s", why)
	}
	ok, why := upgraded.Allow(ctx, "claude", &noOwn, store.RoleFailover)
	if ok || !strings.Contains(why, "settings of target claude changed") {
		t.Errorf("a pass on requests with their own max_tokens admitted requests that send the provider's: %v %q", ok, why)
	}
}
