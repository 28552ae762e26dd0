package config

import (
	"strings"
	"testing"
)

// A model name is part of its target's id (provider/model), which --provider
// lists comma-separated and metrics label, and goes to the provider as
// written: two models written into one target, or a name pasted with a
// trailing space, loaded and made a target whose every attempt asked for a
// model that does not exist. Found by review.
func TestTargetModelWithCommaOrSpaceRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const base = `
providers:
  - {name: openai, type: openai, base_url: "http://127.0.0.1:1/v1", model: gpt-4o}
routes:
`
	for model, want := range map[string]string{
		`"gpt-4o-mini, gpt-4.1-mini"`: `routes.r.targets[1].model "gpt-4o-mini, gpt-4.1-mini": a model name cannot contain ","`,
		`"gpt-4o-mini "`:              `routes.r.targets[1].model "gpt-4o-mini ": a model name cannot contain white space`,
		`"gpt-4o-mini\t"`:             `routes.r.targets[1].model "gpt-4o-mini\t": a model name cannot contain white space`,
		`"gpt-4o-mini\x01"`:           `routes.r.targets[1].model "gpt-4o-mini\x01": a model name cannot contain a control character`,
	} {
		_, err := Parse([]byte(base + "  r: {targets: [{provider: openai}, {provider: openai, model: " + model + "}]}\n"))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "one per target") {
			t.Errorf("target model %s: %v; want %q", model, err, want)
		}
	}
	_, err := Parse([]byte("providers:\n  - {name: openai, type: openai, base_url: \"http://127.0.0.1:1/v1\", model: \"gpt-4o \"}\nroutes: {r: {providers: [openai]}}\n"))
	if err == nil || !strings.Contains(err.Error(), `providers[0] (openai).model "gpt-4o ": a model name cannot contain white space`) {
		t.Errorf("provider model with a space: %v", err)
	}
	// Model ids hold "/", ":" and "." .
	if _, err := Parse([]byte(base + "  r: {targets: [{provider: openai}, {provider: openai, model: meta-llama/Llama-3.1-8B-Instruct}, {provider: openai, model: \"llama3.1:8b\"}]}\n")); err != nil {
		t.Errorf("model ids with / and : : %v", err)
	}
}
