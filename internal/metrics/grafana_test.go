package metrics_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// grafanaPanel is the part of a Grafana panel the test reads; rows nest panels.
type grafanaPanel struct {
	Title   string         `json:"title"`
	Panels  []grafanaPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

var metricName = regexp.MustCompile(`\brouter_[a-zA-Z0-9_:]+`)

// dashboardMetrics returns every router_* metric the dashboard queries, by panel.
func dashboardMetrics(t *testing.T, path string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []grafanaPanel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	out := map[string][]string{}
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, tg := range p.Targets {
				for _, name := range metricName.FindAllString(tg.Expr, -1) {
					out[name] = append(out[name], p.Title)
				}
			}
		}
	}
	walk(dash.Panels)
	return out
}

// Every metric docs/grafana-dashboard.json queries exists in the router's
// registry (a histogram's _bucket, _sum and _count included).
func TestGrafanaDashboardQueriesExistingMetrics(t *testing.T) {
	db := testdb.New(t, store.Options{})
	if err := db.Store.UpsertBreakerStates(context.Background(), "other-replica", []store.BreakerState{{Provider: "primary", State: "open"}}); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Options{Pool: db.Pool, Breakers: fakeBreakers{"primary": "closed"}, Replicas: db.Store, ReplicaMaxAge: time.Minute, LiveJobs: db.Store})
	// Touch every labelled series so that its family is exposed.
	m.AttemptStarted("primary", store.RolePrimary)
	m.HedgeStarted("fallback")
	m.AttemptFinished("fallback", store.RoleHedge, store.AttemptWon, "", time.Second, providers.Usage{PromptTokens: 1, CompletionTokens: 1})
	m.AttemptFinished("primary", store.RolePrimary, store.AttemptFailed, providers.KindUnavailable, time.Second, providers.Usage{})
	m.AttemptCost("acme", "fallback", "m2", 0.01)
	m.RaceLost("primary")
	m.JobSettled(store.JobSucceeded)
	m.BreakerChanged("primary", "open")
	m.RequestServed("POST", "POST /v1/jobs", 201, time.Millisecond)
	fams := scrape(t, m.Handler())

	exists := func(name string) bool {
		if _, ok := fams[name]; ok {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				if f, ok := fams[base]; ok && f.GetType() == dto.MetricType_HISTOGRAM {
					return true
				}
			}
		}
		return false
	}
	used := dashboardMetrics(t, "../../docs/grafana-dashboard.json")
	if len(used) < 10 {
		t.Fatalf("the dashboard queries only %d metrics: %v", len(used), used)
	}
	for name, panels := range used {
		if !exists(name) {
			t.Errorf("panel(s) %q query %s, which the router does not expose", panels, name)
		}
	}
	var unused []string
	for name := range fams {
		if strings.HasPrefix(name, "router_") {
			if _, ok := used[name]; !ok && !usedAsHistogram(used, name) {
				unused = append(unused, name)
			}
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Logf("router metrics no panel shows: %v", unused)
	}
}

func usedAsHistogram(used map[string][]string, base string) bool {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if _, ok := used[base+s]; ok {
			return true
		}
	}
	return false
}
