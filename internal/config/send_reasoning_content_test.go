package config

import (
	"strings"
	"testing"
)

// send_reasoning_content is an openai provider's (the only adapter that can
// send an assistant turn's reasoning_content); on an anthropic or scripted
// provider it would silently do nothing, so it is refused, as supports_lookup
// is. Left out it is off.
func TestSendReasoningContentOnlyForOpenAI(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, p := range []string{
		"{name: c, type: anthropic, api_key_env: ANTHROPIC_API_KEY, model: claude-x, send_reasoning_content: true}",
		"{name: c, type: scripted, send_reasoning_content: true}",
	} {
		_, err := Parse([]byte("providers:\n  - " + p + "\nroutes:\n  default: {providers: [c]}\n"))
		if err == nil || !strings.Contains(err.Error(), "providers[0] (c).send_reasoning_content: only type openai sends an assistant turn's reasoning_content") ||
			!strings.Contains(err.Error(), "remove send_reasoning_content") {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{
		"{name: c, type: openai, base_url: \"http://127.0.0.1:1/v1\", model: m, send_reasoning_content: true}",
		"{name: c, type: anthropic, api_key_env: ANTHROPIC_API_KEY, model: claude-x, send_reasoning_content: false}",
	} {
		if _, err := Parse([]byte("providers:\n  - " + p + "\nroutes:\n  default: {providers: [c]}\n")); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	cfg, err := Parse([]byte("providers:\n  - {name: c, type: openai, base_url: \"http://127.0.0.1:1/v1\", model: m}\n" +
		"  - {name: d, type: openai, base_url: \"http://127.0.0.1:2/v1\", model: m, send_reasoning_content: true}\nroutes:\n  default: {providers: [c, d]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Providers[0].SendReasoningContent || !cfg.Providers[1].SendReasoningContent {
		t.Errorf("send_reasoning_content: left out %v, written true %v", cfg.Providers[0].SendReasoningContent, cfg.Providers[1].SendReasoningContent)
	}
}
