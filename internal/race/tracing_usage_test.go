package race_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt's span carries the usage the attempt stores and is priced at,
// not the provider's raw counts: a thinking model's total that the split
// leaves out is counted as output (stored 603 out, the raw 198), and a
// stream that reported no usage has the router's estimate (the raw 0/0),
// marked router.usage.estimated. Found by review.
func TestAttemptSpanUsageIsTheStoredUsage(t *testing.T) {
	for name, u := range map[string]*providers.Usage{
		"total_gap": {PromptTokens: 20, CompletionTokens: 198, TotalTokens: 623},
		"no_usage":  {},
	} {
		t.Run(name, func(t *testing.T) {
			exp := recordSpans(t)
			b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
				{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
					return providers.Step{Output: racetest.ValidTriage, Usage: u}
				}, Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 10}},
			}})
			id := b.Submit(t).ID
			j := b.WaitSettled(t, id)
			if j.State != store.JobSucceeded {
				t.Fatalf("precondition: job %s", j.State)
			}
			b.Stop()
			var stored providers.Usage
			if err := json.Unmarshal(racetest.AttemptOn(j, "primary").Usage, &stored); err != nil {
				t.Fatal(err)
			}
			s := spanAttrs(jobSpans(exp, id)["chat primary-model"])
			in, out := s["gen_ai.usage.input_tokens"].AsInt64(), s["gen_ai.usage.output_tokens"].AsInt64()
			if in != int64(stored.PromptTokens) || out != int64(stored.CompletionTokens) {
				t.Errorf("span usage in=%d out=%d; the attempt stores (and prices) in=%d out=%d (cost_usd %v)",
					in, out, stored.PromptTokens, stored.CompletionTokens, *racetest.AttemptOn(j, "primary").CostUSD)
			}
			est, marked := s["router.usage.estimated"]
			if stored.Estimated != (marked && est.AsBool()) {
				t.Errorf("span router.usage.estimated %v (set: %v); the stored usage's estimated is %v", est.AsBool(), marked, stored.Estimated)
			}
		})
	}
}

// A hedge loser cancelled before it answered stores the router's estimate of
// its prompt's tokens, priced and counted in the job's lost_cost_usd: its
// span carries that usage too, marked estimated. Found by review.
func TestLoserSpanCarriesItsEstimatedUsage(t *testing.T) {
	exp := recordSpans(t)
	price := &providers.Price{InputPerMTok: 1, OutputPerMTok: 10}
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: 10 * time.Millisecond}, Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.Hang, Price: price},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage), Price: price},
	}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	b.Stop() // the loser has ended
	j := b.Job(t, id)
	a := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || a == nil || a.CostUSD == nil {
		t.Fatalf("precondition: job %s, loser %+v", j.State, a)
	}
	var stored providers.Usage
	if err := json.Unmarshal(a.Usage, &stored); err != nil {
		t.Fatal(err)
	}
	s := spanAttrs(jobSpans(exp, id)["chat primary-model"])
	in, ok := s["gen_ai.usage.input_tokens"]
	if !ok || in.AsInt64() != int64(stored.PromptTokens) || s["gen_ai.usage.output_tokens"].AsInt64() != int64(stored.CompletionTokens) {
		t.Errorf("the loser's span has usage in=%v (set: %v) out=%v; the attempt stores usage %s and cost_usd %v (job lost_cost_usd %v)",
			in.AsInt64(), ok, s["gen_ai.usage.output_tokens"].AsInt64(), a.Usage, *a.CostUSD, *j.LostCostUSD)
	}
	if !s["router.usage.estimated"].AsBool() {
		t.Errorf("the loser's span does not say its usage is estimated (router.usage.estimated); the attempt stores %s", a.Usage)
	}
}
