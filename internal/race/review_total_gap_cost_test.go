package race_test

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// Through the race and the store: a thinking model's answer whose gateway
// reports the thoughts only in total_tokens is stored, and costed, with the
// whole total — the winner's, and a failed answer's the provider billed (an
// empty answer that spent its tokens thinking), which the job's
// lost_cost_usd counts. Found by review: both were costed from their split
// alone (the empty answer at its prompt alone).
func TestReviewTotalBeyondSplitStoredAndCostedInFull(t *testing.T) {
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "thinker", Price: &providers.Price{InputPerMTok: 0.30, OutputPerMTok: 2.50},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Error: &providers.Error{Kind: providers.KindEmptyResponse, Received: true, Message: "the answer has no content",
					Usage: &providers.Usage{PromptTokens: 21, TotalTokens: 81, CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 60}}}}
			}},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 0.30, OutputPerMTok: 2.50},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 20, CompletionTokens: 198, TotalTokens: 623,
					CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 405}}}
			}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	failed, won := racetest.AttemptOn(j, "thinker"), racetest.AttemptOn(j, "fallback")
	if j.State != store.JobSucceeded || failed == nil || failed.State != store.AttemptFailed || won == nil || won.State != store.AttemptWon {
		t.Fatalf("job %s, attempts %+v: want the thinker's failure and the fallback's win", j.State, j.Attempts)
	}
	for _, c := range []struct {
		a                 *store.Attempt
		prompt, completed int
	}{{failed, 21, 60}, {won, 20, 603}} {
		var u providers.Usage
		if err := json.Unmarshal(c.a.Usage, &u); err != nil || u.PromptTokens != c.prompt || u.CompletionTokens != c.completed ||
			u.TotalTokens != c.prompt+c.completed || u.Estimated {
			t.Errorf("%s's usage %s (%v): want prompt_tokens %d, completion_tokens %d (the total less the prompt), not estimated",
				c.a.Provider, c.a.Usage, err, c.prompt, c.completed)
		}
	}
	lost, winner := (21*0.30+60*2.50)/1e6, (20*0.30+603*2.50)/1e6
	if failed.CostUSD == nil || !near(*failed.CostUSD, lost) || won.CostUSD == nil || !near(*won.CostUSD, winner) {
		t.Errorf("attempts' cost %s and %s, want %v and %v", fmtCost(failed.CostUSD), fmtCost(won.CostUSD), lost, winner)
	}
	if j.CostUSD == nil || !near(*j.CostUSD, lost+winner) || j.LostCostUSD == nil || !near(*j.LostCostUSD, lost) {
		t.Errorf("job's cost %s, lost %s: want %v, %v", fmtCost(j.CostUSD), fmtCost(j.LostCostUSD), lost+winner, lost)
	}
}
