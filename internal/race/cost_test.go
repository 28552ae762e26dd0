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
	"github.com/routerhq/router/internal/testdb"
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
	// An attempt's goroutine counts its cost after handing on its result, so
	// the job can settle first: Stop waits for the job's goroutines to end.
	b.Stop()
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

// SPEC §18: an attempt is priced with the configuration of the replica that
// makes it. Three replicas share one database and configure the same target
// at two different prices and at none; each one's attempts, whether created
// with their job (planned) or by the runner (unplanned), carry that replica's
// price, and the unpriced one's have neither price nor cost.
func TestEachReplicaPricesItsOwnAttempts(t *testing.T) {
	u := &providers.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}
	respond := func(int, *providers.Request) providers.Step {
		return providers.Step{Output: racetest.ValidTriage, Usage: u}
	}
	db := testdb.New(t, store.Options{})
	replicas := []struct {
		name  string
		price *providers.Price
	}{
		{"replica-a", &providers.Price{InputPerMTok: 2, OutputPerMTok: 8}},
		{"replica-b", &providers.Price{InputPerMTok: 5, OutputPerMTok: 20}},
		{"replica-c", nil}, // started last: with prices kept in one table, it would have unpriced everyone
	}
	bundles := make([]*racetest.Bundle, len(replicas))
	for i, r := range replicas {
		bundles[i] = racetest.New(t, racetest.Options{DB: db, LeaseOwner: r.name, Route: race.Route{},
			Providers: []racetest.Provider{{Name: "primary", Price: r.price, Respond: respond}}})
	}
	for i, r := range replicas {
		b := bundles[i]
		for _, j := range []*store.Job{b.Submit(t), b.SubmitUnplanned(t)} {
			j = b.WaitSettled(t, j.ID)
			if j.State != store.JobSucceeded || len(j.Attempts) != 1 {
				t.Fatalf("%s: job %s with %d attempts", r.name, j.State, len(j.Attempts))
			}
			a := j.Attempts[0]
			var in, out *float64
			if err := db.Pool.QueryRow(context.Background(), `SELECT price_input_per_mtok::float8, price_output_per_mtok::float8
				FROM attempts WHERE id = $1`, a.ID).Scan(&in, &out); err != nil {
				t.Fatal(err)
			}
			if r.price == nil {
				if in != nil || out != nil || a.CostUSD != nil || j.CostUSD != nil {
					t.Fatalf("%s: unpriced target's attempt has price %v/%v, cost %v, job cost %v", r.name, in, out, a.CostUSD, j.CostUSD)
				}
				continue
			}
			if in == nil || out == nil || *in != r.price.InputPerMTok || *out != r.price.OutputPerMTok {
				t.Fatalf("%s: attempt price %v/%v, want %v", r.name, in, out, *r.price)
			}
			want, _ := r.price.Cost(*u)
			if a.CostUSD == nil || !near(*a.CostUSD, want) || j.CostUSD == nil || !near(*j.CostUSD, want) {
				t.Fatalf("%s: attempt cost %v, job cost %v, want %v", r.name, a.CostUSD, j.CostUSD, want)
			}
		}
	}
}
