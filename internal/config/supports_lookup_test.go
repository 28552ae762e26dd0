package config

import (
	"strings"
	"testing"
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
