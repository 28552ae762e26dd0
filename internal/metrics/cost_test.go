package metrics_test

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
)

// The cost comes from the usage a provider reports, which the adapters do not
// check: {"prompt_tokens": 10, "completion_tokens": -1000} at a price is a
// negative cost. A counter panics when it would decrease, and AttemptCost runs
// in the attempt's goroutine, outside any recover: a provider could crash the
// router (SPEC §17). Such a cost is left out; so are NaN and ±Inf, which
// would poison the series for good.
func TestAttemptCostIgnoresImpossibleCosts(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	price := &providers.Price{InputPerMTok: 0.15, OutputPerMTok: 0.60}
	neg, ok := price.Cost(providers.Usage{PromptTokens: 10, CompletionTokens: -1000})
	if !ok || neg >= 0 {
		t.Fatalf("the provider's usage gives cost %v (%v), want a negative one", neg, ok)
	}
	m.AttemptCost("acme", "p1", "m1", 0.25)
	for _, usd := range []float64{neg, math.NaN(), math.Inf(1), math.Inf(-1)} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("AttemptCost(%v) panicked: %v", usd, v)
				}
			}()
			m.AttemptCost("acme", "p1", "m1", usd)
		}()
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "p1", "m1")); got != 0.25 {
		t.Fatalf("router_cost_usd_total = %v, want 0.25 (only the possible cost)", got)
	}
}
