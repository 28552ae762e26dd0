package race_test

import (
	"strconv"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A job whose route mixes priced and unpriced targets does not show the cost
// of its priced attempts alone as its cost_usd: a priced primary's invalid
// answer and an unpriced fallback's win (with real usage) read as a job that
// cost only what it lost — the winner free. cost_usd is left out, as for a
// job with no priced attempt; lost_cost_usd, every attempt of which is
// priced, stays. Found by review.
func TestJobCostLeftOutWhenTheWinnerIsUnpriced(t *testing.T) {
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(`{"category":"nope"}`), Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 10}},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)}, // no price
	}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	b.Stop()
	j := b.Job(t, id)
	w, l := racetest.AttemptOn(j, "fallback"), racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || w == nil || len(w.Usage) == 0 || w.CostUSD != nil || l == nil || l.CostUSD == nil {
		t.Fatalf("precondition: job %s winner %+v loser %+v", j.State, w, l)
	}
	if j.CostUSD != nil {
		t.Errorf("job cost_usd %s (lost_cost_usd %s) although the winner (usage %s) has no price: the total is partial",
			usd(j.CostUSD), usd(j.LostCostUSD), w.Usage)
	}
	if j.LostCostUSD == nil || *j.LostCostUSD != *l.CostUSD {
		t.Errorf("job lost_cost_usd %s; want the priced loser's cost_usd %v", usd(j.LostCostUSD), *l.CostUSD)
	}
}

// And when the unpriced attempt is the one that lost, neither total is
// whole: both are left out.
func TestJobCostsLeftOutWhenALoserIsUnpriced(t *testing.T) {
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(`{"category":"nope"}`)}, // no price
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage), Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 10}},
	}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	b.Stop()
	j := b.Job(t, id)
	w, l := racetest.AttemptOn(j, "fallback"), racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || w == nil || w.CostUSD == nil || l == nil || len(l.Usage) == 0 || l.CostUSD != nil {
		t.Fatalf("precondition: job %s winner %+v loser %+v", j.State, w, l)
	}
	if j.CostUSD != nil || j.LostCostUSD != nil {
		t.Errorf("job cost_usd %s, lost_cost_usd %s although the losing attempt (usage %s) has no price: both totals are partial",
			usd(j.CostUSD), usd(j.LostCostUSD), l.Usage)
	}
}

// usd shows a cost that may be left out.
func usd(c *float64) string {
	if c == nil {
		return "left out"
	}
	return strconv.FormatFloat(*c, 'f', -1, 64)
}
