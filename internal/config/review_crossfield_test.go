package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/tokens"
)

// Rules between settings that nothing checked: two entries of one owner with
// different webhooks (the last one silently won), a tenant listen address that
// is not host:port or is the operator listener's, a provider base_url without
// a scheme, and a tokenizer the router does not have (every job then finds the
// provider ineligible).
func TestCrossFieldRules(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
listen: "8080"
api_keys:
  - {owner: acme, key_env: A, webhook: {url: "https://a.example/h", secret_env: S}}
  - {owner: acme, key_env: B, webhook: {url: "https://b.example/h", secret_env: S}}
providers:
  - {name: p, type: openai, base_url: "api.openai.com/v1", model: m, tokenizer: o200k}
  - {name: q, type: anthropic, base_url: "https://user:pw@[::1", model: m}
`,
		`listen: "8080" is not host:port`,
		"api_keys[1].webhook: owner acme has another webhook in api_keys[0]",
		`providers[0] (p).base_url: "api.openai.com/v1" is not an absolute http:// or https:// URL with a host`,
		`providers[0] (p).tokenizer: "o200k" is not one of o200k_base, cl100k_base, p50k_base, r50k_base`,
		"providers[1] (q).base_url: not a URL",
	)
	for _, y := range []string{
		"listen: 127.0.0.1:9090\n",
		"listen: \":9090\"\n",
		"listen: 0.0.0.0:7000\nops_listen: 127.0.0.1:7000\n",
		// localhost is 127.0.0.1 to the listener: the same socket
		"listen: localhost:7000\nops_listen: 127.0.0.1:7000\n",
		// the port as the listener reads it: 07000 is 7000
		"listen: 127.0.0.1:07000\nops_listen: 127.0.0.1:7000\n",
	} {
		mustRefuse(t, y, "are the same port")
	}
	if _, err := Parse([]byte("listen: \"localhost:18080\"\nops_listen: \"[::1]:18080\"\n")); err != nil && strings.Contains(err.Error(), "same port") {
		t.Errorf("localhost (127.0.0.1) and [::1] are different sockets: %v", err)
	}
	mustRefuse(t, "listen: 127.0.0.1:99999\n", "listen: 127.0.0.1:99999: port 99999 is out of range (0 to 65535)")
	mustRefuse(t, "ops_listen: 127.0.0.1:70000\n", "ops_listen: 127.0.0.1:70000: port 70000 is out of range")
	if _, err := Parse([]byte(`
listen: 127.0.0.1:0
ops_listen: 127.0.0.1:0
api_keys:
  - {owner: acme, key_env: A, webhook: {url: "https://a.example/h", secret_env: S}}
  - {owner: acme, key_env: B, webhook: {url: "https://a.example/h", secret_env: S}}
  - {owner: acme, key_env: C}
providers:
  - {name: p, type: openai, base_url: "http://127.0.0.1:8000/v1", model: m, tokenizer: cl100k_base}
`)); err != nil {
		t.Fatalf("one webhook on several entries, free ports, a good base_url: %v", err)
	}
}

// The tokenizers the configuration accepts are the ones internal/tokens has.
func TestTokenizersAreTheOnesTheRouterHas(t *testing.T) {
	for _, name := range Tokenizers {
		if enc, err := tokens.EncodingForModel(name, ""); err != nil || enc != name {
			t.Errorf("tokenizer %s: %q %v", name, enc, err)
		}
	}
	for _, name := range []string{tokens.O200kBase, tokens.Cl100kBase, tokens.P50kBase, tokens.R50kBase} {
		if !slices.Contains(Tokenizers, name) {
			t.Errorf("internal/tokens has %s; config.Tokenizers does not", name)
		}
	}
}
