package config

import "testing"

// context_window and tokenizer were the provider's, applied to every model
// it serves: a target {provider: openai, model: gpt-3.5-turbo} under a
// gpt-4o provider was judged with 128000 tokens and o200k_base, and could not
// say otherwise. A target now has its own, defaulting to the provider's
// window; the provider's tokenizer is its own model's, and another model
// without one is counted by its name. Found by review.
func TestTargetContextWindowAndTokenizer(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: openai, type: openai, base_url: "http://127.0.0.1:1/v1", model: gpt-4o, context_window: 100000, tokenizer: o200k_base}
routes:
  default:
    targets:
      - {provider: openai}
      - {provider: openai, model: gpt-3.5-turbo}
      - {provider: openai, model: gpt-3.5-turbo-16k, context_window: 16385, tokenizer: cl100k_base}
  other:
    targets: [{provider: openai, context_window: 64000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ResolvedTarget{}
	for _, rt := range c.AllTargets() {
		got[rt.ID] = rt
	}
	for id, want := range map[string]struct {
		window    int
		tokenizer string
	}{
		"openai":                   {64000, "o200k_base"}, // the route target's window is the provider's own model's
		"openai/gpt-3.5-turbo":     {100000, ""},          // the provider's window; tokenizer by the model's name
		"openai/gpt-3.5-turbo-16k": {16385, "cl100k_base"},
	} {
		if rt := got[id]; rt.ContextWindow != want.window || rt.Tokenizer != want.tokenizer {
			t.Errorf("%s: window %d, tokenizer %q; want %d, %q", id, rt.ContextWindow, rt.Tokenizer, want.window, want.tokenizer)
		}
	}
}

// A target's window and tokenizer are checked like the provider's, and one
// target cannot be given two by two routes.
func TestTargetContextWindowAndTokenizerChecked(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
providers:
  - {name: p, type: openai, base_url: "http://127.0.0.1:1/v1", model: m}
routes:
  a: {targets: [{provider: p, model: x, context_window: 0, tokenizer: gpt2}]}
  b: {targets: [{provider: p, model: y, context_window: 8000}]}
  c: {targets: [{provider: p, model: y, context_window: 4000}]}
`, "routes.a.targets[0].context_window (0) must be 1 or more tokens (omit it for the provider's, 128000)",
		`routes.a.targets[0].tokenizer: "gpt2" is not one of o200k_base`,
		"routes.c: target p/y has context_window 4000, but routes.b gives it 8000")
}
