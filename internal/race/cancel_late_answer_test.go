package race_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A valid answer that comes after the caller cancelled its job is discarded,
// but its provider billed it: the attempt (cancelled by CancelJob, without
// usage) gets the usage the provider reported and its cost_usd, the job's
// cost_usd and lost_cost_usd count it, and router_cost_usd_total counts that
// one cost, once — the database and the metrics agree.
func TestLateAnswerAfterCancelHasItsCost(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	called, release := make(chan struct{}), make(chan struct{})
	reported := providers.Usage{PromptTokens: 1000, CompletionTokens: 200}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
		{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100},
			Respond: func(int, *providers.Request) providers.Step {
				close(called)
				<-release // the answer is held until the job is cancelled
				u := reported
				return providers.Step{Output: racetest.ValidTriage, Usage: &u}
			}},
	}})
	id := b.Submit(t).ID
	<-called // the request is out
	if err := b.Store.CancelJob(context.Background(), "acme", id); err != nil {
		close(release)
		t.Fatal(err)
	}
	b.WaitSettled(t, id)
	close(release) // the valid answer arrives only now
	b.Stop()       // waits for the attempt's end to be recorded and observed
	j := b.Job(t, id)
	if j.State != store.JobCancelled || len(j.Attempts) != 1 {
		t.Fatalf("job %s with %d attempts; want cancelled with one", j.State, len(j.Attempts))
	}
	p := racetest.AttemptOn(j, "primary")
	if p.State != store.AttemptCancelled {
		t.Fatalf("attempt %s, want cancelled", p.State)
	}
	var u providers.Usage
	if len(p.Usage) == 0 || json.Unmarshal(p.Usage, &u) != nil || u != reported {
		t.Fatalf("the attempt's usage %s, want the provider's %+v", p.Usage, reported)
	}
	cost := float64(1000*10+200*100) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, cost) {
		t.Fatalf("attempt cost %v, want %v", p.CostUSD, cost)
	}
	if j.CostUSD == nil || !near(*j.CostUSD, cost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, cost) {
		t.Fatalf("job cost %v, lost cost %v; want both %v", j.CostUSD, j.LostCostUSD, cost)
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, cost) {
		t.Fatalf("router_cost_usd_total = %v, want %v (counted once)", got, cost)
	}
	if got := promptTokensCounted(t, m, "primary"); got != 1000 {
		t.Fatalf("router_tokens_total{kind=prompt} = %v, want 1000 (counted once)", got)
	}
}
