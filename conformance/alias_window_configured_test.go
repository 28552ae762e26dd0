package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// `router conformance run --provider fallback/small` builds only the target
// it runs (Options.Targets), yet a case sent with the route's alias gpt-4o is
// counted as routing counts it: as the target of the same provider serving
// gpt-4o (here a route target with its own tokenizer), which only
// Options.Configured, every configured target, holds.
func TestAliasRunCountsWithATargetNotSelected(t *testing.T) {
	e := newEnv(t)
	p := providers.NewScripted(providers.ScriptedConfig{Name: "fallback", Model: "small", Respond: oracle(e.answers, nil)})
	small := &race.Target{Provider: p, Model: "small", ContextWindow: 2048, ProviderWindow: 128000, Encoding: "o200k_base", Timeout: time.Minute}
	configured := map[string]*race.Target{
		"fallback/small":  small,
		"fallback/gpt-4o": {Model: "gpt-4o", ContextWindow: 128000, ProviderWindow: 128000, Encoding: "cl100k_base"},
	}
	rep, err := conformance.Run(context.Background(), conformance.Options{
		Targets: map[string]*race.Target{"fallback/small": small}, Configured: configured, Prompts: e.prompts, Suites: e.suites,
		Providers: []string{"fallback/small"}, PromptNames: []string{"triage"}, RouterVersion: "test",
		ChatRoutes: []conformance.ChatRoute{{Name: "default", Targets: []string{"fallback/small"}, Prompt: "triage", Models: []string{"gpt-4o"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	for _, r := range rep.Results {
		if r.Model != "gpt-4o" {
			continue
		}
		ran = true
		for _, c := range r.Cases {
			if c.Encoding != "cl100k_base" {
				t.Errorf("alias case %s counted with %q; routing counts gpt-4o on provider fallback as fallback/gpt-4o does, with cl100k_base", c.Name, c.Encoding)
			}
		}
	}
	if !ran {
		t.Fatalf("no alias run: %+v", rep.Results)
	}
}
