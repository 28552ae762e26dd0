package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// docs/operations.md "Metrics": the router_db_* counters "count the jobs'
// work only: the router's monitoring of itself — the reads of /metrics
// scrapes, the operator endpoints' reads … and the breaker states a replica
// publishes every 5 s — is not counted, so the counters stay still while no
// job runs"; operators are told to divide them by router_jobs_settled_total
// for the database work per job (the Grafana panel "Database work per settled
// job" does; SPEC §14 reads round trips per job from these counters). The
// readiness probe's ping — transaction_read_only asked on a pool connection
// (store.Ping's checkWritable) — runs on the request's context, not an
// Uncounted one: every /readyz of a load balancer or a kubelet (every few
// seconds, from each) adds a round trip, a statement and a transaction, and
// the per-job figures of a quiet replica are the probes'.
func TestReadinessProbesAreNotCountedAsDatabaseWork(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv, err := server.New(context.Background(), newConfig(t, db, newFakeLLM(t).srv.URL, ""), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	scrape := func() map[string]float64 {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		srv.OpsHandler.ServeHTTP(rec, req)
		out := map[string]float64{}
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			for _, name := range []string{"router_db_round_trips_total", "router_db_statements_total", "router_db_transactions_total"} {
				if v, ok := strings.CutPrefix(l, name+" "); ok {
					out[name], _ = strconv.ParseFloat(v, 64)
				}
			}
		}
		return out
	}
	readyz := func() {
		t.Helper()
		rec := httptest.NewRecorder()
		srv.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("/readyz: %d %s", rec.Code, rec.Body)
		}
	}
	readyz() // the first probe checks the migrations too; the next ones only ping
	const probes = 200
	before := scrape()
	for range probes {
		readyz()
	}
	after := scrape()
	// The replica's own background work (recovery's sweeps) counts, and may
	// run meanwhile: a handful of round trips, far from one per probe.
	for name, v := range after {
		if d := v - before[name]; d >= probes {
			t.Errorf("%s grew by %.0f over %d readiness probes and no job: each probe is counted as the jobs' database work", name, d, probes)
		}
	}
}
