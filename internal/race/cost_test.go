package race_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// SPEC §18: each attempt with usage and a price has cost_usd; the job has
// cost_usd (all attempts) and lost_cost_usd (attempts that did not win);
// router_cost_usd_total counts it by owner, provider and model.
func TestCostOfAttemptsAndJob(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
		{Name: "primary", Price: &providers.Price{InputPerMTok: 2, OutputPerMTok: 8},
			Respond: func(int, *providers.Request) providers.Step {
				// Answers, but breaks the prompt's contract: paid for, not used.
				return providers.Step{Output: `{"category":"nonsense"}`, Usage: &providers.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}}
			}},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}}
			}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s", j.State)
	}
	p, f := racetest.AttemptOn(j, "primary"), racetest.AttemptOn(j, "fallback")
	if p.State != store.AttemptInvalid || f.State != store.AttemptWon {
		t.Fatalf("attempts %s %s", p.State, f.State)
	}
	const primaryCost, fallbackCost = (1000*2 + 500*8) / 1e6, (2000*1 + 100*4) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, primaryCost) || f.CostUSD == nil || !near(*f.CostUSD, fallbackCost) {
		t.Fatalf("attempt costs %v %v; usage %s / %s; states %s %s", p.CostUSD, f.CostUSD, p.Usage, f.Usage, p.State, f.State)
	}
	if j.CostUSD == nil || !near(*j.CostUSD, primaryCost+fallbackCost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, primaryCost) {
		t.Fatalf("job cost %v lost %v", j.CostUSD, j.LostCostUSD)
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, primaryCost) {
		t.Fatalf("router_cost_usd_total primary = %v", got)
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "fallback", "fallback-model")); !near(got, fallbackCost) {
		t.Fatalf("router_cost_usd_total fallback = %v", got)
	}
}

// Without a price an attempt has no cost, and neither has its job.
func TestNoPriceNoCost(t *testing.T) {
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded || j.Attempts[0].CostUSD != nil || j.CostUSD != nil || j.LostCostUSD != nil {
		t.Fatalf("job %s cost %v lost %v attempt %v", j.State, j.CostUSD, j.LostCostUSD, j.Attempts[0].CostUSD)
	}
}

// A hedge that wins: the primary's late answer is lost, and its cost is the
// job's lost cost; the hedging cost and the latency it bought are reported.
func TestCostOfHedging(t *testing.T) {
	release := make(chan struct{})
	u := &providers.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: 10 * time.Millisecond, KeepLosers: true}, Providers: []racetest.Provider{
		{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100},
			Respond: func(int, *providers.Request) providers.Step {
				<-release // finishes only after the hedge has won
				return providers.Step{Output: racetest.ValidTriage, Usage: u}
			}},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 10},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: u}
			}},
	}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	close(release)
	b.Stop() // waits for the primary's late result to be recorded
	j := b.Job(t, id)
	p, h := racetest.AttemptOn(j, "primary"), racetest.AttemptOn(j, "fallback")
	if p.State != store.AttemptLost || h.State != store.AttemptWon || h.Role != store.RoleHedge {
		t.Fatalf("primary %s, hedge %s/%s", p.State, h.Role, h.State)
	}
	const primaryCost, hedgeCost = (100*10 + 10*100) / 1e6, (100*1 + 10*10) / 1e6
	if j.CostUSD == nil || !near(*j.CostUSD, primaryCost+hedgeCost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, primaryCost) {
		t.Fatalf("job cost %v lost %v", j.CostUSD, j.LostCostUSD)
	}
	hc, err := b.Store.RecentHedgeCost(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !near(hc.TotalUSD, primaryCost+hedgeCost) || !near(hc.LostUSD, primaryCost) || !near(hc.HedgeUSD, hedgeCost) || hc.HedgeWins != 1 {
		t.Fatalf("hedge cost %+v", hc)
	}
	if want := float64(p.FinishedAt.Sub(*h.FinishedAt).Microseconds()) / 1000; math.Abs(hc.LatencyBoughtMS-want) > 0.01 || want <= 0 {
		t.Fatalf("latency bought %vms, want %vms", hc.LatencyBoughtMS, want)
	}
}
