package config

import (
	"testing"
)

// An anthropic base_url ending in /v1 (copied from Anthropic's
// documentation) would send every request to /v1/v1/messages, each failing
// as model_not_found: refused at load, saying which root to write. Found by
// review.
func TestAnthropicBaseURLWithV1IsRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for base, root := range map[string]string{
		"https://api.anthropic.com/v1":            "use https://api.anthropic.com",
		"https://api.anthropic.com/v1/":           "use https://api.anthropic.com",
		"https://llm-proxy.internal/anthropic/V1": "use https://llm-proxy.internal/anthropic",
	} {
		mustRefuse(t, "providers:\n  - {name: c, type: anthropic, base_url: \""+base+"\", model: m, api_key_env: ANTHROPIC_API_KEY}\n",
			"providers[0] (c).base_url for type anthropic must not end in /v1: the SDK adds /v1/messages", root)
	}
	for _, ok := range []string{
		"{name: c, type: anthropic, base_url: \"https://api.anthropic.com\", model: m, api_key_env: ANTHROPIC_API_KEY}",
		"{name: c, type: anthropic, base_url: \"https://proxy.internal/v1beta\", model: m}",
		"{name: o, type: openai, base_url: \"https://api.openai.com/v1\", model: m, api_key_env: OPENAI_API_KEY}",
	} {
		if _, err := Parse([]byte("providers:\n  - " + ok + "\n")); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}
