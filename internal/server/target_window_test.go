package server_test

import (
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/tokens"
)

// One provider serves many models (SPEC §15), but the context window and the
// tokenizer were the provider's, applied to every model it serves: a target
// {provider: openai, model: gpt-3.5-turbo} under a gpt-4o provider with
// tokenizer o200k_base was counted with o200k_base, and could not be given
// its own window. Found by review.
func TestTargetsCarryTheirOwnContextWindowAndTokenizer(t *testing.T) {
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: openai, type: openai, base_url: "http://127.0.0.1:1/v1", model: gpt-4o, context_window: 128000, tokenizer: o200k_base}
routes:
  default:
    targets:
      - {provider: openai}
      - {provider: openai, model: gpt-3.5-turbo}
      - {provider: openai, model: my-finetune, context_window: 16385, tokenizer: cl100k_base}
`))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := server.BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]struct {
		window int
		enc    string
	}{
		"openai":               {128000, tokens.O200kBase},
		"openai/gpt-3.5-turbo": {128000, tokens.Cl100kBase}, // counted by its own name
		"openai/my-finetune":   {16385, tokens.Cl100kBase},
	} {
		tg := targets[id]
		if tg == nil {
			t.Fatalf("no target %s", id)
		}
		enc, err := tokens.EncodingForModel(tg.Encoding, tg.Model)
		if err != nil || tg.ContextWindow != want.window || enc != want.enc {
			t.Errorf("%s: window %d, encoding %s (%v); want %d, %s", id, tg.ContextWindow, enc, err, want.window, want.enc)
		}
	}
}
