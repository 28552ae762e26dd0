package server_test

import (
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
)

// hedge_budget: {percent: 0, min_concurrent: 0} allows no call in flight
// beyond one per job (docs/configuration.md): not only no hedge, but no retry
// or failover beside another call either — as when a job resumed with two
// transient failures has both retries due at once (resumeRetry). The race
// reads a budget of zero as none configured (race.Route: unlimited), so the
// route it is given must keep one call per job by itself: max_inflight 1.
// It used to keep the configured max_inflight (2), and the second retry
// started beside the first on an "unlimited" budget.
func TestZeroHedgeBudgetKeepsOneCallPerJob(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(`providers:
  - {name: z-primary, type: scripted}
  - {name: z-fallback, type: scripted}
routes:
  default: {providers: [z-primary, z-fallback], hedge_budget: {percent: 0, min_concurrent: 0}}
  budgeted: {providers: [z-primary, z-fallback]}
`))
	if err != nil {
		t.Fatal(err)
	}
	routes := server.BuildRoutes(cfg)
	r := routes["default"]
	if r.HedgeAfter != 0 || r.AdaptiveHedge || r.MaxInflight != 1 {
		t.Fatalf("route with a zero hedge budget built with hedge_after %s (adaptive %v), max_inflight %d: want no hedge and max_inflight 1 — "+
			"the budget allows no call beyond one per job in flight", r.HedgeAfter, r.AdaptiveHedge, r.MaxInflight)
	}
	if b := routes["budgeted"]; b.MaxInflight != cfg.Routes["budgeted"].MaxInflight || !b.AdaptiveHedge {
		t.Fatalf("route with the default budget built with max_inflight %d (adaptive hedge %v): want its configured %d, hedged",
			b.MaxInflight, b.AdaptiveHedge, cfg.Routes["budgeted"].MaxInflight)
	}
}
