package race_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A winner whose provider reported a total without its split (a gateway
// that gives only total_tokens) or no output count for its answer was
// billed all the same: it has a cost_usd, priced from the router's
// estimate, and so has its job. Before, {"total_tokens": 500} priced at
// nothing (cost_usd null, router_cost_usd_total not counted), and an answer
// reported with completion_tokens 0 cost only its prompt. Found by review.
func TestUnsplitUsageOfAWinnerIsPriced(t *testing.T) {
	cases := []struct {
		name  string
		usage providers.Usage
	}{
		{"total only", providers.Usage{TotalTokens: 500}},
		{"no output count", providers.Usage{PromptTokens: 300, TotalTokens: 300}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
				{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100},
					Respond: func(int, *providers.Request) providers.Step {
						u := c.usage
						return providers.Step{Output: racetest.ValidTriage, Usage: &u}
					}},
			}})
			j := b.WaitSettled(t, b.Submit(t).ID)
			won := racetest.AttemptOn(j, "primary")
			if j.State != store.JobSucceeded || won == nil || won.State != store.AttemptWon {
				t.Fatalf("job %s, attempts %+v: want the primary's win", j.State, j.Attempts)
			}
			var u providers.Usage
			if err := json.Unmarshal(won.Usage, &u); err != nil {
				t.Fatalf("usage %s: %v", won.Usage, err)
			}
			if !u.Estimated || u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Fatalf("winner's usage %s: want an estimate with prompt and completion tokens that add up", won.Usage)
			}
			if c.usage.PromptTokens > 0 && u.PromptTokens != c.usage.PromptTokens {
				t.Fatalf("winner's usage %s: want the provider's %d prompt tokens kept", won.Usage, c.usage.PromptTokens)
			}
			want := (float64(u.PromptTokens)*10 + float64(u.CompletionTokens)*100) / 1e6
			near := func(c *float64) bool { return c != nil && math.Abs(*c-want) <= 1e-12 }
			if !near(won.CostUSD) || !near(j.CostUSD) {
				t.Fatalf("winner's cost %s, job's %s: want %v", fmtCost(won.CostUSD), fmtCost(j.CostUSD), want)
			}
		})
	}
}
