package tokens_test

import (
	"testing"

	"github.com/routerhq/router/internal/tokens"
)

// An OpenAI fine-tuned model (ft:<base>:<org>:<suffix>:<id>) fell back to
// cl100k_base as unknown; it counts as its base model.
func TestModelEncodingFineTuned(t *testing.T) {
	for model, want := range map[string]string{
		"ft:gpt-4o-mini-2024-07-18:acme::9abc":       tokens.O200kBase,
		"ft:gpt-4o-2024-08-06:acme:triage:AbC123":    tokens.O200kBase,
		"openai/ft:gpt-4.1-mini-2025-04-14:acme::x1": tokens.O200kBase,
		"FT:GPT-3.5-turbo-0125:acme::x":              tokens.Cl100kBase,
		"ft:gpt-3.5-turbo-0125:acme::x":              tokens.Cl100kBase,
		"gpt-oss-120b":                               tokens.O200kBase,
		"openai/gpt-oss-20b":                         tokens.O200kBase,
	} {
		if enc, ok := tokens.ModelEncoding(model); enc != want || !ok {
			t.Errorf("ModelEncoding(%q) = %q, %v; want %q, true", model, enc, ok, want)
		}
	}
	for _, model := range []string{"ft:", "ft:unknown-base:acme::x", "ft:llama-3:acme::x"} {
		if enc, ok := tokens.ModelEncoding(model); ok {
			t.Errorf("ModelEncoding(%q) = %q, known; want unknown", model, enc)
		}
	}
}
