package race_test

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt whose provider had begun answering and whose stream was then
// cut (no usage reported, no error status) failed on a prompt the provider
// certainly received and billed: its usage is estimated as for a cancelled
// loser, so it has a cost_usd, the job's lost_cost_usd counts what the
// failover cost, and router_cost_usd_total counts it. They counted nothing.
// Found by review.
func TestCutAnswerHasAnEstimatedCost(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	var mu sync.Mutex
	var sent *providers.Request
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
		{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{StreamCut: true, Output: racetest.ValidTriage}
			},
			OnCall: func(_ int, req *providers.Request) { mu.Lock(); sent = req; mu.Unlock() }},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	id := b.Submit(t).ID
	j := b.WaitSettled(t, id)
	b.Stop() // every attempt's end observed
	p := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptFailed {
		t.Fatalf("job %s, attempts %+v: want the primary failed (cut) and the fallback's win", j.State, j.Attempts)
	}
	mu.Lock()
	want := promptTokens(t, sent)
	mu.Unlock()
	if u := estimated(t, p); u.PromptTokens != want || u.CompletionTokens != 0 || !u.Estimated {
		t.Fatalf("the cut attempt's usage %s, want %d prompt tokens, estimated", p.Usage, want)
	}
	lost := float64(want*10) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, lost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, lost) {
		t.Fatalf("cut attempt cost %v, job lost cost %v; want %v", p.CostUSD, j.LostCostUSD, lost)
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, lost) {
		t.Fatalf("router_cost_usd_total of the cut attempt = %v, want %v", got, lost)
	}
}
