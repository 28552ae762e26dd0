package config

import (
	"strings"
	"testing"
)

// A hosted API without api_key_env would refuse every attempt (auth), open
// the breaker and move all traffic to the fallbacks: refused at load, with
// how to fix it. A keyless server of one's own (vLLM, Ollama, a proxy that
// adds the key) stays allowed. Found by review.
func TestHostedProviderNeedsAKey(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, p := range []string{
		"{name: c, type: anthropic, model: claude-x}",
		"{name: c, type: anthropic, base_url: \"https://API.anthropic.com\", model: claude-x}",
		"{name: o, type: openai, base_url: \"https://api.openai.com/v1\", model: gpt-4o-mini}",
	} {
		_, err := Parse([]byte("providers:\n  - " + p + "\n"))
		if err == nil || !strings.Contains(err.Error(), "api_key_env is required") || !strings.Contains(err.Error(), "set it to the name of the environment variable") {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{
		"{name: v, type: openai, base_url: \"http://127.0.0.1:8000/v1\", model: llama}",
		"{name: c, type: anthropic, base_url: \"https://llm-proxy.internal\", model: claude-x}",
		"{name: c, type: anthropic, model: claude-x, api_key_env: ANTHROPIC_API_KEY}",
	} {
		if _, err := Parse([]byte("providers:\n  - " + p + "\n")); err != nil {
			t.Errorf("%s refused: %v", p, err)
		}
	}
}
