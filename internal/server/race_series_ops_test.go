package server_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A serving router tells its metrics the configured targets and routes, so
// the race's counters of each exist at 0 before any job (rate() and
// increase() see each one's first event), under the target's id, and under
// each breaker of a model a route sends in place of a target's own (the
// label of the attempts that send it). Found by review (LOW 4).
func TestMetricsExposeEachTargetsAndRoutesRaceCountersAtZero(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := newConfig(t, db, newFakeLLM(t).srv.URL, "")
	cfg.Routes["default"].Models = []string{"alias"}
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ops := httptest.NewServer(srv.OpsHandler)
	defer ops.Close()
	_, m := get(t, ops.URL+"/metrics", "")
	for _, series := range []string{
		`router_races_lost_total{provider="llm"} 0`,
		`router_hedges_started_total{provider="llm"} 0`,
		`router_hedges_won_total{provider="llm"} 0`,
		`router_attempts_started_total{provider="llm",role="hedge"} 0`,
		`router_attempts_total{outcome="lost",provider="llm",role="primary"} 0`,
		`router_hedges_denied_total{route="default"} 0`,
	} {
		if !strings.Contains(m, series) {
			t.Errorf("/metrics has no %s before any job", series)
		}
	}
	// An attempt that sends the route's alias is counted under its breaker,
	// llm/alias (as /v1/providers counts it): its series exist at 0 too.
	if !strings.Contains(m, `router_races_lost_total{provider="llm/alias"} 0`) {
		t.Errorf("/metrics has no race series of llm/alias, the breaker its alias attempts are counted under")
	}
}
