package race_test

import (
	"context"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt whose request was out when the caller cancelled its job was
// sent: its provider bills the prompt. CancelJob settles it `cancelled`
// without usage; its own run, cut by the cancellation, adds the router's
// estimate of the prompt (once), so that it has a cost_usd, the job's
// cost_usd and lost_cost_usd count it, and router_cost_usd_total and
// router_tokens_total count it once.
func TestCancelledJobAttemptHasAnEstimatedCost(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	var mu sync.Mutex
	var sent *providers.Request
	called := make(chan struct{}, 1)
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
		{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100}, Respond: racetest.Hang,
			OnCall: func(_ int, req *providers.Request) {
				mu.Lock()
				sent = req
				mu.Unlock()
				called <- struct{}{}
			}},
	}})
	id := b.Submit(t).ID
	<-called // the request is out; the provider holds it until the call's context ends
	if err := b.Store.CancelJob(context.Background(), "acme", id); err != nil {
		t.Fatal(err)
	}
	b.WaitSettled(t, id)
	b.Stop() // the cancellation cuts the call (the release); Stop waits for the attempt's end to be recorded and observed
	j := b.Job(t, id)
	if j.State != store.JobCancelled || len(j.Attempts) != 1 {
		t.Fatalf("job %s with %d attempts; want cancelled with one", j.State, len(j.Attempts))
	}
	p := racetest.AttemptOn(j, "primary")
	if p.State != store.AttemptCancelled {
		t.Fatalf("attempt %s, want cancelled by the job's cancellation", p.State)
	}
	mu.Lock()
	want := promptTokens(t, sent)
	mu.Unlock()
	if u := estimated(t, p); u.PromptTokens != want || u.CompletionTokens != 0 || !u.Estimated {
		t.Fatalf("the attempt's usage %s, want %d prompt tokens, estimated", p.Usage, want)
	}
	cost := float64(want*10) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, cost) {
		t.Fatalf("attempt cost %v, want %v", p.CostUSD, cost)
	}
	if j.CostUSD == nil || !near(*j.CostUSD, cost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, cost) {
		t.Fatalf("job cost %v, lost cost %v; want both %v", j.CostUSD, j.LostCostUSD, cost)
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, cost) {
		t.Fatalf("router_cost_usd_total = %v, want %v (counted once)", got, cost)
	}
	if got := promptTokensCounted(t, m, "primary"); got != float64(want) {
		t.Fatalf("router_tokens_total{kind=prompt} = %v, want %d (counted once)", got, want)
	}
}

// promptTokensCounted is router_tokens_total{provider, kind="prompt"}.
func promptTokensCounted(t *testing.T, m *metrics.Metrics, provider string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "router_tokens_total" {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["provider"] == provider && labels["kind"] == "prompt" {
				return mt.GetCounter().GetValue()
			}
		}
	}
	return 0
}
