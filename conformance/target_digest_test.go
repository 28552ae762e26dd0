package conformance_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
)

// backupConfig is a configuration whose openai-backup provider is written
// as provider (a YAML flow mapping's members), serving gpt-4o-mini for its
// own id and gpt-4o for the route target openai-backup/gpt-4o.
func backupConfig(t *testing.T, provider string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(fmt.Appendf(nil, `database_url: postgres://unused
providers:
  - {name: openai-primary, type: openai, base_url: https://api.openai.com/v1, api_key_env: PRIMARY_KEY, model: gpt-4o}
  - {name: openai-backup, model: gpt-4o-mini, %s}
routes:
  default: {targets: [{provider: openai-primary}, {provider: openai-backup}, {provider: openai-backup, model: gpt-4o}]}
`, provider))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const backupOnOpenAI = `type: openai, base_url: https://api.openai.com/v1, api_key_env: BACKUP_KEY`

// A target's digest is its endpoint and the request settings that change its
// answers: the API key, deadlines, retries, breaker, pool, price, context
// window and tokenizer leave it as it is, and so does writing the same base
// URL another way; the type, the base URL, the model, streaming, lookups, an
// Anthropic provider's max_tokens and a scripted provider's script change it.
func TestConformanceTargetDigestIsTheEndpointAndRequestSettings(t *testing.T) {
	digest := func(provider, target, model string) string {
		t.Helper()
		return conformance.TargetDigests(backupConfig(t, provider))(target, model, false)
	}
	base := digest(backupOnOpenAI, "openai-backup", "")
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(base) {
		t.Fatalf("digest %q is not a hex SHA-256", base)
	}
	if got := digest(backupOnOpenAI, "openai-backup", "gpt-4o-mini"); got != base {
		t.Errorf("the target's own model named: %s, want %s as for \"\"", got, base)
	}
	if got := digest(backupOnOpenAI, "no-such-target", ""); got != "" {
		t.Errorf("a target the configuration does not have: %q, want \"\" (nothing compared)", got)
	}

	same := map[string]string{
		"another API key variable": `type: openai, base_url: https://api.openai.com/v1, api_key_env: ROTATED_KEY`,
		"deadlines and retries":    backupOnOpenAI + `, timeout: 90s, first_byte_timeout: 20s, stream_idle_timeout: 10s, max_retries: 3`,
		"breaker and pool":         backupOnOpenAI + `, breaker: {consecutive_failures: 9, open_for: 1m, half_open_probes: 2}, max_idle_conns: 16`,
		"price, window, tokenizer and answer bound": backupOnOpenAI +
			`, price: {input_per_mtok: 1, output_per_mtok: 2}, context_window: 64000, tokenizer: cl100k_base, max_response_bytes: 1048576`,
		"the base URL written another way": `type: openai, base_url: 'HTTPS://API.OpenAI.com:443/v1/', api_key_env: BACKUP_KEY`,
		"streaming as the default is":      backupOnOpenAI + `, stream: true`,
	}
	for what, provider := range same {
		if got := digest(provider, "openai-backup", ""); got != base {
			t.Errorf("%s changed the digest: %s, want %s", what, got, base)
		}
	}

	other := map[string]string{
		"a self-hosted server with the same model name": `type: openai, base_url: http://vllm.internal:8000/v1, api_key_env: BACKUP_KEY`,
		"another path on the same host":                 `type: openai, base_url: https://api.openai.com/v2, api_key_env: BACKUP_KEY`,
		"another type":                                  `type: anthropic, base_url: https://api.openai.com, api_key_env: BACKUP_KEY`,
		"no streaming":                                  backupOnOpenAI + `, stream: false`,
		"lookups (store and metadata in the body)":      backupOnOpenAI + `, supports_lookup: true`,
	}
	seen := map[string]string{base: "the base"}
	for what, provider := range other {
		got := digest(provider, "openai-backup", "")
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: digest %s, as for %s", what, got, prev)
		}
		seen[got] = what
	}
	if got := digest(backupOnOpenAI, "openai-backup/gpt-4o", ""); seen[got] != "" || got == "" {
		t.Errorf("the target serving another model: digest %q, as for %q", got, seen[got])
	}

	// An Anthropic provider's endpoint and max_tokens default as the adapter
	// applies them.
	claude := `type: anthropic, api_key_env: BACKUP_KEY`
	if a, b := digest(claude, "openai-backup", ""), digest(claude+`, base_url: https://api.anthropic.com, max_tokens: 4096`, "openai-backup", ""); a != b {
		t.Errorf("Anthropic's defaults written out: %s, left out: %s; want one digest", b, a)
	}
	if a, b := digest(claude, "openai-backup", ""), digest(claude+`, max_tokens: 512`, "openai-backup", ""); a == b {
		t.Error("another max_tokens for requests that set none left the digest as it was")
	}

	// A scripted provider's script is what it answers; its latency is not.
	script := func(s string) string { return "type: scripted, script: [" + s + "]" }
	if a, b := digest(script(`{output: '{}'}`), "openai-backup", ""), digest(script(`{output: '{}', latency: 2s}`), "openai-backup", ""); a != b {
		t.Error("a scripted step's latency changed the digest")
	}
	if a, b := digest(script(`{output: '{}'}`), "openai-backup", ""), digest(script(`{output: '{\"x\": 1}'}`), "openai-backup", ""); a == b {
		t.Error("another scripted answer left the digest as it was")
	}
}
