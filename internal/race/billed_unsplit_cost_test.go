package race_test

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A failure the provider billed (an answer without choices, a content
// filter, a finish_reason "error"…) whose gateway reports only total_tokens
// ({"total_tokens": 81}, no split) is stored with that usage as it is: the
// database prices no split (cost_usd NULL), and since its prompt and
// completion counts are 0 the job's sums treat it as an attempt without
// usage. The job's cost_usd is then the winner's alone, shown as whole, and
// lost_cost_usd is 0 although failing over cost the failed attempt's
// tokens. A winner with the same usage is estimated and priced
// (answerUsage, TestAnswerUsageEstimatesAnUnsplitOrEmptyOutputCount); a
// billed failure is not (billedOutcome keeps it, and estimatedUsage is
// skipped because the failure carries a usage).
func TestBilledFailureWithATotalButNoSplitIsPriced(t *testing.T) {
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "gateway", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Error: &providers.Error{Kind: providers.KindEmptyResponse, Received: true,
					Message: "response has no choices", Usage: &providers.Usage{TotalTokens: 81}}}
			}},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 20, CompletionTokens: 30, TotalTokens: 50}}
			}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	failed, won := racetest.AttemptOn(j, "gateway"), racetest.AttemptOn(j, "fallback")
	if j.State != store.JobSucceeded || failed == nil || failed.State != store.AttemptFailed || won == nil || won.State != store.AttemptWon {
		t.Fatalf("job %s, attempts %+v: want the gateway's billed failure and the fallback's win", j.State, j.Attempts)
	}
	var u providers.Usage
	_ = json.Unmarshal(failed.Usage, &u)
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		t.Errorf("billed failure's usage %s: a total with no split, stored unpriced (as a winner's is not: it is estimated, prompt and answer)", failed.Usage)
	}
	if failed.CostUSD == nil {
		t.Errorf("billed failure has no cost_usd although its target is priced and the provider billed it (usage %s)", failed.Usage)
	}
	if j.LostCostUSD == nil || *j.LostCostUSD == 0 {
		t.Errorf("job's lost_cost_usd %s: the billed failure counts nothing", fmtCost(j.LostCostUSD))
	}
}
