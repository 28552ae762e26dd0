package tokens_test

import (
	"testing"

	"github.com/routerhq/router/internal/tokens"
)

// docs/prompts.md §4: "gpt-oss-* as o200k_base". Ollama (and LM Studio)
// name the same models with a tag after a colon — gpt-oss:20b,
// gpt-oss:120b — and those are unknown here, counted with cl100k_base.
func TestOllamaTaggedModelEncoding(t *testing.T) {
	for _, m := range []string{"gpt-oss:20b", "gpt-oss:120b", "gpt-oss:latest"} {
		if enc, known := tokens.ModelEncoding(m); !known || enc != tokens.O200kBase {
			t.Errorf("ModelEncoding(%q) = %q, known %v; want o200k_base, as for gpt-oss-20b", m, enc, known)
		}
	}
}

// A tag after the name is dropped when the dashed form is unknown, and an
// unknown model stays unknown with or without one.
func TestModelEncodingTagged(t *testing.T) {
	for model, want := range map[string]string{
		"gpt-4o:latest":          tokens.O200kBase,
		"ollama/gpt-oss:20b":     tokens.O200kBase,
		"GPT-OSS:120B":           tokens.O200kBase,
		"gpt-4:latest":           tokens.Cl100kBase,
		"gpt-3.5-turbo:0125":     tokens.Cl100kBase,
		"chatgpt-4o-latest:main": tokens.O200kBase,
	} {
		if enc, ok := tokens.ModelEncoding(model); enc != want || !ok {
			t.Errorf("ModelEncoding(%q) = %q, %v; want %q, true", model, enc, ok, want)
		}
	}
	for _, model := range []string{"llama3:8b", ":20b", "qwen2.5:7b-instruct"} {
		if enc, ok := tokens.ModelEncoding(model); ok {
			t.Errorf("ModelEncoding(%q) = %q, known; want unknown", model, enc)
		}
	}
}
