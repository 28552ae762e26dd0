package race_test

import (
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An Anthropic answer that pauses its turn (stop_reason pause_turn) fails its
// attempt and the job fails over, but the provider billed it: the failed
// attempt records the answer's usage, id and model, so it has a cost_usd, the
// job's lost_cost_usd counts it, and so does router_cost_usd_total — as for
// an answer that breaks the contract. (Found in review: the attempt had no
// usage and no cost, and failing over looked free.)
func TestBilledFailPauseTurnRecordsUsageAndCost(t *testing.T) {
	claude := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
		return anthropicfake.Reply{Text: racetest.ValidTriage, StopReason: "pause_turn", Model: "claude-paused-1", InputTokens: 1000, OutputTokens: 500}
	})
	primary, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "anthropic", BaseURL: claude.URL, APIKey: "sk-ant", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
		{Name: "anthropic", Adapter: primary, Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}}
			}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, attempts %+v", j.State, j.Attempts)
	}
	p, f := racetest.AttemptOn(j, "anthropic"), racetest.AttemptOn(j, "fallback")
	if p.State != store.AttemptFailed || f.State != store.AttemptWon {
		t.Fatalf("attempts %s %s, want failed and won", p.State, f.State)
	}
	var perr map[string]any
	if err := json.Unmarshal(p.Error, &perr); err != nil || perr["code"] != "pause_turn" {
		t.Fatalf("paused attempt's error %s: %v", p.Error, err)
	}
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil || u != (providers.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}) {
		t.Fatalf("paused attempt's usage %s (%v): want what the provider reported", p.Usage, err)
	}
	if p.ProviderResponseID == nil || *p.ProviderResponseID != "msg_fake1" || p.ResponseModel == nil || *p.ResponseModel != "claude-paused-1" {
		t.Fatalf("paused attempt's response id %v model %v", p.ProviderResponseID, p.ResponseModel)
	}
	const pausedCost, fallbackCost = (1000*3 + 500*15) / 1e6, (2000*1 + 100*4) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, pausedCost) {
		t.Fatalf("paused attempt's cost %v, want %v", p.CostUSD, pausedCost)
	}
	if j.CostUSD == nil || !near(*j.CostUSD, pausedCost+fallbackCost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, pausedCost) {
		t.Fatalf("job cost %v lost %v", j.CostUSD, j.LostCostUSD)
	}
	// An attempt's goroutine counts its cost after handing on its result:
	// Stop waits for the job's goroutines to end.
	b.Stop()
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "anthropic", "anthropic-model")); !near(got, pausedCost) {
		t.Fatalf("router_cost_usd_total for the paused attempt = %v, want %v", got, pausedCost)
	}
}
