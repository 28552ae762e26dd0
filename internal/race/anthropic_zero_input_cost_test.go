package race_test

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An Anthropic-compatible server whose whole stream reports input_tokens 0
// (SGLang's and mlx-node's /v1/messages count the input only at the end, or
// never) had its winning attempt priced with no input cost: the adapter
// passed the 0 on as Anthropic's figure, and the race keeps a provider's
// figures. The prompt is the router's estimate now, marked estimated, and
// priced.
func TestAnthropicZeroInputTokensPromptEstimatedAndPriced(t *testing.T) {
	for _, stream := range []bool{true, false} {
		fake := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
			return anthropicfake.Reply{Text: racetest.ValidTriage, InputTokens: 0, OutputTokens: 20}
		})
		adapter, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "anthropic", BaseURL: fake.URL, APIKey: "sk-ant",
			Model: "claude-test", Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
			{Name: "anthropic", Adapter: adapter, Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100}},
		}})
		j := b.WaitSettled(t, b.Submit(t).ID)
		won := racetest.AttemptOn(j, "anthropic")
		if j.State != store.JobSucceeded || won == nil || won.State != store.AttemptWon {
			t.Fatalf("stream=%v: job %s, want the Anthropic attempt's win", stream, j.State)
		}
		u := estimated(t, won)
		if u.PromptTokens <= 0 || !u.Estimated {
			t.Errorf("stream=%v: usage %s: the prompt the provider received is recorded as 0 tokens, not estimated", stream, won.Usage)
		}
		outputOnly := float64(u.CompletionTokens*100) / 1e6
		if won.CostUSD == nil || *won.CostUSD <= outputOnly {
			var cost any = won.CostUSD
			if won.CostUSD != nil {
				cost = *won.CostUSD
			}
			t.Errorf("stream=%v: cost %v, want the prompt priced too (output alone: %v)", stream, cost, outputOnly)
		}
	}
}
