package config

import (
	"strings"
	"testing"
)

// One api_key_env named by providers at different hosts was accepted ("two
// providers: one account's key"): the OpenAI key sent with every request to
// Anthropic, or in clear to a self-hosted http:// server. Only providers at
// the same host may share one. Found by review.
func TestProviderKeySharedAcrossHostsRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte(`
providers:
  - {name: gpt, type: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY, model: gpt-4o}
  - {name: claude, type: anthropic, api_key_env: OPENAI_API_KEY, model: claude-test}
  - {name: vllm, type: openai, base_url: "http://10.0.0.5:8000/v1", api_key_env: OPENAI_API_KEY, model: llama}
routes: {r: {providers: [gpt, claude, vllm]}}
`))
	if err == nil {
		t.Fatal("one api_key_env for providers at three hosts was accepted")
	}
	for _, want := range []string{
		"providers[1] (claude).api_key_env: OPENAI_API_KEY is also providers[0] (gpt).api_key_env",
		"provider gpt is type openai at https://api.openai.com and provider claude is type anthropic at https://api.anthropic.com",
		"providers[2] (vllm).api_key_env: OPENAI_API_KEY is also providers[0] (gpt).api_key_env",
		"provider vllm is type openai at http://10.0.0.5:8000: the one key would be sent to both, each of which could use it, and over http:// it travels in clear",
		"a separate api_key_env",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// Providers at one host share one account's key: other models, streaming or
// not, another path or protocol of the same server (a LiteLLM proxy's OpenAI
// and Anthropic formats; Anthropic's native and OpenAI-compatible endpoints:
// the key goes to one party either way — refusing them was found by review),
// the host written in capitals or with its scheme's own port, an Anthropic
// base_url that is the default one.
func TestProviderKeySharedAtOneHostAccepted(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for name, y := range map[string]string{
		"two models on one base_url": `
providers:
  - {name: fast, type: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY, model: gpt-4o-mini}
  - {name: slow, type: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY, model: gpt-4o, stream: false}
routes: {r: {providers: [fast, slow]}}
`,
		"one host written two ways": `
providers:
  - {name: fast, type: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY, model: gpt-4o-mini}
  - {name: slow, type: openai, base_url: "HTTPS://API.OpenAI.com:443/v2/", api_key_env: OPENAI_API_KEY, model: gpt-4o}
routes: {r: {providers: [fast, slow]}}
`,
		"litellm proxy, openai and anthropic formats": `
providers:
  - {name: lite-oai, type: openai, base_url: "https://litellm.internal.example.com/v1", api_key_env: LITELLM_MASTER_KEY, model: gpt-4o}
  - {name: lite-ant, type: anthropic, base_url: "https://litellm.internal.example.com", api_key_env: LITELLM_MASTER_KEY, model: claude-sonnet}
routes: {r: {providers: [lite-oai, lite-ant]}}
`,
		"anthropic native and its openai-compatible endpoint": `
providers:
  - {name: native, type: anthropic, api_key_env: ANTHROPIC_API_KEY, model: claude-test}
  - {name: compat, type: openai, base_url: "https://api.anthropic.com/v1", api_key_env: ANTHROPIC_API_KEY, model: claude-test}
routes: {r: {providers: [native, compat]}}
`,
		"anthropic's default host and its base_url": `
providers:
  - {name: a, type: anthropic, api_key_env: ANTHROPIC_API_KEY, model: claude-test}
  - {name: b, type: anthropic, base_url: "https://api.anthropic.com", api_key_env: ANTHROPIC_API_KEY, model: claude-test, max_tokens: 1000}
routes: {r: {providers: [a, b]}}
`,
	} {
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
}
