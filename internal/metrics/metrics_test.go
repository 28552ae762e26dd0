package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

var _ race.Observer = (*metrics.Metrics)(nil)

type fakeBreakers map[string]string

func (f fakeBreakers) BreakerStates() map[string]string { return f }

// scrape fetches /metrics and parses the text exposition.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value finds the sample of family name whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
	for _, m := range f.GetMetric() {
		match := true
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no sample of %s with %v", name, want)
	return 0
}

// Acceptance 3 (issue 7): /metrics exposes the series; a scrape parses.
func TestMetricsScrape(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.UpsertBreakerStates(ctx, "other-replica", []store.BreakerState{{Provider: "primary", State: "open"}}); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Options{Pool: db.Pool, Breakers: fakeBreakers{"primary": "half-open", "fallback": "closed"},
		Replicas: db.Store, ReplicaMaxAge: time.Minute})
	// A race: the primary starts and loses to a hedge on the fallback.
	m.AttemptStarted("primary", store.RolePrimary)
	m.AttemptStarted("fallback", store.RoleHedge)
	m.HedgeStarted("fallback")
	m.HedgeDenied("default")
	m.AttemptFinished("fallback", store.RoleHedge, store.AttemptWon, "", 120*time.Millisecond,
		providers.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120})
	m.JobSettled(store.JobSucceeded)
	m.AttemptFinished("primary", store.RolePrimary, store.AttemptLost, "", 900*time.Millisecond, providers.Usage{PromptTokens: 100, CompletionTokens: 25})
	m.RaceLost("primary")
	m.AttemptFinished("primary", store.RoleRetry, store.AttemptFailed, providers.KindUnavailable, 10*time.Millisecond, providers.Usage{})
	m.JobSettled(store.JobFailed)
	m.IdempotentReplay()
	m.IdempotentReplay()
	m.KeyConflict()
	m.BreakerChanged("primary", "open")

	fams := scrape(t, m.Handler())
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"router_jobs_settled_total", map[string]string{"state": "succeeded"}, 1},
		{"router_jobs_settled_total", map[string]string{"state": "failed"}, 1},
		{"router_attempts_started_total", map[string]string{"provider": "fallback", "role": "hedge"}, 1},
		{"router_attempts_total", map[string]string{"provider": "fallback", "role": "hedge", "outcome": "won"}, 1},
		{"router_attempts_total", map[string]string{"provider": "primary", "role": "primary", "outcome": "lost"}, 1},
		{"router_attempts_total", map[string]string{"provider": "primary", "role": "retry", "outcome": "failed"}, 1},
		{"router_attempt_errors_total", map[string]string{"provider": "primary", "kind": "unavailable"}, 1},
		{"router_races_lost_total", map[string]string{"provider": "primary"}, 1},
		{"router_hedges_started_total", map[string]string{"provider": "fallback"}, 1},
		{"router_hedges_won_total", map[string]string{"provider": "fallback"}, 1},
		{"router_hedges_denied_total", map[string]string{"route": "default"}, 1},
		{"router_idempotent_replays_total", nil, 2},
		{"router_idempotency_key_conflicts_total", nil, 1},
		{"router_attempt_duration_seconds", map[string]string{"provider": "primary", "outcome": "lost"}, 1},
		{"router_tokens_total", map[string]string{"provider": "primary", "kind": "prompt"}, 100},
		{"router_tokens_total", map[string]string{"provider": "fallback", "kind": "completion"}, 20},
		{"router_breaker_state", map[string]string{"provider": "primary", "state": "half-open"}, 1},
		{"router_breaker_state", map[string]string{"provider": "primary", "state": "open"}, 0},
		{"router_breaker_state", map[string]string{"provider": "fallback", "state": "closed"}, 1},
		{"router_breaker_transitions_total", map[string]string{"provider": "primary", "to": "open"}, 1},
		{"router_breaker_replica_state", map[string]string{"replica": "other-replica", "provider": "primary", "state": "open"}, 1},
		{"router_breaker_replica_scrape_ok", nil, 1},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The histogram's sum is the observed latency.
	for _, s := range fams["router_attempt_duration_seconds"].GetMetric() {
		if s.Histogram.GetSampleCount() == 1 && s.Histogram.GetSampleSum() <= 0 {
			t.Errorf("histogram sample without a sum: %v", s)
		}
	}
	// Pool statistics of the real pool.
	if got := value(t, fams, "router_db_pool_max_connections", nil); got < 1 {
		t.Errorf("max connections %v", got)
	}
	for _, name := range []string{"router_db_pool_acquired_connections", "router_db_pool_idle_connections",
		"router_db_pool_total_connections", "router_db_pool_acquires_total", "router_db_pool_acquire_wait_seconds_total",
		"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("missing %s", name)
		}
	}
	if got := value(t, fams, "router_db_pool_acquires_total", nil); got < 1 {
		t.Errorf("acquires %v: the replica collector queried through the pool", got)
	}
}
