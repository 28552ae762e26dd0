package race_test

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// The same Anthropic-compatible server as
// TestAnthropicZeroInputTokensPromptEstimatedAndPriced (input_tokens 0 in
// every usage), whose message ends its turn with pause_turn (a failure,
// billed, failed over): the failed attempt is recorded with the server's 0
// as the provider's prompt figure, not estimated, and priced with no input
// cost, so the job's lost_cost_usd leaves out the prompt the provider
// received — the defect f18df7e fixed for a whole answer only.
func TestAnthropicZeroInputBilledFailurePromptEstimatedAndPriced(t *testing.T) {
	for _, stream := range []bool{true, false} {
		fake := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
			return anthropicfake.Reply{Text: "Let me look that up.", StopReason: "pause_turn", InputTokens: 0, OutputTokens: 20}
		})
		adapter, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "anthropic", BaseURL: fake.URL, APIKey: "sk-ant",
			Model: "claude-test", Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
			{Name: "anthropic", Adapter: adapter, Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100}},
			{Name: "fallback", Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}}
			}},
		}})
		j := b.WaitSettled(t, b.Submit(t).ID)
		b.Stop()
		a := racetest.AttemptOn(j, "anthropic")
		if j.State != store.JobSucceeded || a == nil || a.State != store.AttemptFailed {
			t.Fatalf("stream=%v: job %s, attempts %+v: want the Anthropic attempt failed (pause_turn) and the fallback's win", stream, j.State, j.Attempts)
		}
		var u providers.Usage
		if err := json.Unmarshal(a.Usage, &u); err != nil {
			t.Fatalf("stream=%v: usage %s: %v", stream, a.Usage, err)
		}
		if u.PromptTokens <= 0 {
			t.Errorf("stream=%v: failed attempt's usage %s, cost %s: the prompt the provider received is recorded as 0 tokens (not estimated) and not priced",
				stream, a.Usage, fmtCost(a.CostUSD))
		}
	}
}
