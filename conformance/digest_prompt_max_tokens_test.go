package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

// The target digest holds an Anthropic provider's max_tokens: the max_tokens
// its adapter sends when a request sets none. triage sets its own
// (max_tokens: 300), so for triage the provider's max_tokens is never sent:
// raising it (say from 4096 to 8192, for chat completions without a
// max_tokens) changes no byte of any triage request, yet withdraws the
// target's triage pass — the target silently leaves failover on every prompt
// until someone reruns the suite. The digest must cover what changes the
// answers and nothing that does not (docs/conformance.md, "Target settings").
func TestConformanceAnthropicMaxTokensDoesNotWithdrawAPromptsPassThatSetsItsOwn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var mu sync.Mutex
	bodies := map[string]string{} // by case, the body last sent
	fake := anthropicfake.New(t, func(r anthropicfake.Request) anthropicfake.Reply {
		ans, ok := e.answers[lastText(r.Body)]
		if !ok {
			return anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "unknown case"}
		}
		b, _ := json.Marshal(r.Body)
		mu.Lock()
		bodies[ans.caseName] = string(b)
		mu.Unlock()
		return anthropicfake.Reply{Text: ans.reference, Model: "claude-test-20250101", InputTokens: 100, OutputTokens: 20}
	})
	t.Setenv("CONFORMANCE_ANTHROPIC_KEY", "sk-ant-test")
	cfgWith := func(maxTokens int) *config.Config {
		cfg, err := config.Parse(fmt.Appendf(nil, `database_url: postgres://unused
providers:
  - {name: primary, type: anthropic, base_url: %[1]q, api_key_env: CONFORMANCE_ANTHROPIC_KEY, model: claude-test}
  - {name: claude, type: anthropic, base_url: %[1]q, api_key_env: CONFORMANCE_ANTHROPIC_KEY, model: claude-test, max_tokens: %[2]d, max_retries: 0}
routes:
  default: {providers: [primary, claude]}
`, fake.URL, maxTokens))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	run := func(cfg *config.Config, st *store.Store) (*conformance.Report, map[string]string) {
		t.Helper()
		targets, err := server.BuildSelectedTargets(cfg, []string{"claude"})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		clear(bodies)
		mu.Unlock()
		rep, err := conformance.Run(ctx, conformance.Options{Store: st, Targets: targets, Prompts: e.prompts, Suites: e.suites,
			Providers: []string{"claude"}, PromptNames: []string{"triage"}, RouterVersion: "test", TargetDigests: conformance.TargetDigests(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return rep, copyBodies(bodies)
	}
	before, after := cfgWith(4096), cfgWith(8192)
	rep, sentBefore := run(before, e.st) // recorded: the pass the gate counts
	if !rep.Passed {
		t.Fatalf("precondition: claude passes triage: %+v", rep.Results)
	}
	_, sentAfter := run(after, nil) // what the raised setting sends, recorded nowhere
	if len(sentBefore) == 0 || len(sentAfter) != len(sentBefore) {
		t.Fatalf("precondition: bodies captured %d, %d", len(sentBefore), len(sentAfter))
	}
	for c, b := range sentBefore {
		if sentAfter[c] != b {
			t.Fatalf("precondition: case %s is sent differently after the change:\n%s\n%s", c, b, sentAfter[c])
		}
	}

	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "claude-test" }), conformance.TargetSettings(conformance.TargetDigests(after)))
	if ok, why := gate.Allow(ctx, "claude", mustPrompt(t, e, "triage"), store.RoleFailover); !ok {
		t.Errorf("every triage request is byte for byte what passed, yet the gate refuses claude: %s", why)
	}
}

func copyBodies(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
