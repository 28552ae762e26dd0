package conformance_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A chat completion naming a route's model alias sends the alias to each
// target, and routing judges that request as the alias's own target of the
// same provider (race's targetFor: its window and tokenizer), not with the
// window and tokenizer configured for the target's own model. The alias run
// of `router conformance run` must count the suite's cases the same way
// (docs/conformance.md: "counted exactly as routing counts it"), or it records
// a context_window failure for a model routing serves, and the gate keeps
// that target out of failover for good: rerunning records the same failure.
//
// Configuration mirrored: provider "fallback" serves gpt-4o (128k window);
// the route's fallback is the route target {provider: fallback, model: small,
// context_window: 2048, tokenizer: cl100k_base} (id fallback/small); the
// route's models are [gpt-4o] and its conformance_prompt is triage.
func TestAliasRunCountsAsRoutingCounts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("primary", failing)
	p := providers.NewScripted(providers.ScriptedConfig{Name: "fallback", Model: "gpt-4o", Respond: oracle(e.answers, nil)})
	e.scripted["fallback"] = p
	// The provider's own target (gpt-4o, the provider's 128k window) and the
	// route's fallback (its own model with a small window and tokenizer).
	e.targets["fallback"] = &race.Target{Provider: p, Model: "gpt-4o", ContextWindow: 128000, ProviderWindow: 128000, Timeout: time.Minute}
	e.targets["fallback/small"] = &race.Target{Provider: p, Model: "small", ContextWindow: 2048, ProviderWindow: 128000,
		Encoding: "cl100k_base", Timeout: time.Minute}
	e.order = append(e.order, "fallback/small")
	routes := []conformance.ChatRoute{{Name: "default", Targets: []string{"primary", "fallback/small"}, Prompt: "triage", Models: []string{"gpt-4o"}}}

	rep := e.run(t, conformance.Options{Providers: []string{"fallback/small"}, PromptNames: []string{"triage"}, ChatRoutes: routes})

	// What routing decides for a chat completion naming gpt-4o on this route.
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	j := chatAliasJob(t, e, gate, "gpt-4o")
	var decisions []race.Decision
	if err := json.Unmarshal(j.Routing, &decisions); err != nil {
		t.Fatal(err)
	}
	routingEncoding := ""
	for _, d := range decisions {
		if d.Provider == "fallback/small" && d.Event == "" {
			routingEncoding = d.Encoding
		}
	}

	var alias *conformance.Result
	for i := range rep.Results {
		if r := &rep.Results[i]; r.Provider == "fallback/small" && r.Model == "gpt-4o" {
			alias = r
		}
	}
	if alias == nil {
		t.Fatalf("no alias run: %s", runsOf(rep))
	}
	for _, c := range alias.Cases {
		if c.Encoding != "" && c.Encoding != routingEncoding {
			t.Errorf("alias case %s counted with %s; routing counts gpt-4o on fallback/small with %s", c.Name, c.Encoding, routingEncoding)
			break
		}
	}
	if !alias.Passed {
		for _, c := range alias.Cases {
			if !c.Passed {
				t.Errorf("alias run fails case %s at %s: %v", c.Name, c.Stage, c.Failures)
			}
		}
	}
	if ok, why := gate.AllowModel(ctx, "fallback/small", "gpt-4o", mustPrompt(t, e, "triage"), store.RoleFailover); !ok {
		t.Errorf("after the run the gate refuses fallback/small for gpt-4o: %s", why)
	}
	if winner(j) != "fallback/small" {
		t.Errorf("a chat completion naming gpt-4o did not fail over to fallback/small (%s); routing %s", j.State, j.Routing)
	}
}
