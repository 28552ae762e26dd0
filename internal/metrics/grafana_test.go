package metrics_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
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
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Panels      []grafanaPanel `json:"panels"`
	Targets     []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// dashboardPanels returns every panel of the dashboard at path, rows' panels
// included.
func dashboardPanels(t *testing.T, path string) []grafanaPanel {
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
	var out []grafanaPanel
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	return out
}

var metricName = regexp.MustCompile(`\brouter_[a-zA-Z0-9_:]+`)

// dashboardMetrics returns every router_* metric the dashboard queries, by panel.
func dashboardMetrics(t *testing.T, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, p := range dashboardPanels(t, path) {
		for _, tg := range p.Targets {
			for _, name := range metricName.FindAllString(tg.Expr, -1) {
				out[name] = append(out[name], p.Title)
			}
		}
	}
	return out
}

// perReplica are the series one replica reports of itself (Prometheus tells
// replicas apart by the scrape's instance label) or of every replica (a
// replica label).
var perReplica = regexp.MustCompile(`\brouter_breaker_(replica_)?state\b`)

// byLabels matches an aggregation's "by (labels)".
var byLabels = regexp.MustCompile(`\bby\s*\(([^)]*)\)`)

// The dashboard's panels say what their queries compute: a per-second unit
// only for rates (router_jobs_live, a count, was drawn as "ops"); a breaker
// panel's title and grouping agree on replicas ("this replica" took the max
// over every replica); each panel has its own description (three were
// copies of another's). Found by review.
func TestGrafanaDashboardPanelsSayWhatTheyShow(t *testing.T) {
	descriptions := map[string]string{}
	for _, p := range dashboardPanels(t, "../../docs/grafana-dashboard.json") {
		if len(p.Targets) == 0 {
			continue
		}
		if p.Description == "" {
			t.Errorf("panel %q has no description", p.Title)
		} else if other, ok := descriptions[p.Description]; ok {
			t.Errorf("panels %q and %q have the same description %q", other, p.Title, p.Description)
		} else {
			descriptions[p.Description] = p.Title
		}
		if strings.Contains(p.Title, "this replica") {
			t.Errorf("panel %q: a dashboard over every scraped replica has no \"this replica\"", p.Title)
		}
		for _, tg := range p.Targets {
			switch unit := p.FieldConfig.Defaults.Unit; unit {
			case "ops", "reqps", "rps", "wps", "iops", "cps":
				if !strings.Contains(tg.Expr, "rate(") && !strings.Contains(tg.Expr, "deriv(") {
					t.Errorf("panel %q: unit %s (per second) for %s, which is no rate", p.Title, unit, tg.Expr)
				}
			}
			if !perReplica.MatchString(tg.Expr) {
				continue
			}
			for _, m := range byLabels.FindAllStringSubmatch(tg.Expr, -1) {
				labels := strings.Split(m[1], ",")
				for i := range labels {
					labels[i] = strings.TrimSpace(labels[i])
				}
				if !slices.Contains(labels, "instance") && !slices.Contains(labels, "replica") {
					t.Errorf("panel %q: %s merges the replicas' breakers (by %s): group by instance or replica", p.Title, tg.Expr, m[1])
				}
			}
		}
	}
}

// Every metric docs/grafana-dashboard.json queries exists in the router's
// registry (a histogram's _bucket, _sum and _count included), and every
// router_* metric has a panel: README.md says the dashboard charts every
// metric, and fourteen had none — among them router_webhook_deliveries_total,
// which docs/operations.md says to alert on (found by review). The registry
// is a serving router's: database work counters and webhook deliveries
// included.
func TestGrafanaDashboardQueriesExistingMetrics(t *testing.T) {
	db := testdb.New(t, store.Options{})
	if err := db.Store.UpsertBreakerStates(context.Background(), "other-replica", []store.BreakerState{{Provider: "primary", State: "open"}}); err != nil {
		t.Fatal(err)
	}
	dbm := metrics.NewDB()
	m := metrics.New(metrics.Options{Pool: db.Pool, DB: dbm, Breakers: fakeBreakers{"primary": "closed"}, Replicas: db.Store, ReplicaMaxAge: time.Minute, LiveJobs: db.Store})
	m.Registry().MustRegister(metrics.NewWebhooks(), metrics.NewMaintenance(fakeLeader{}))
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
	m.HedgeDenied("default")
	dbm.Batch("claim", 3)
	dbm.CommitWait("claim", time.Millisecond)
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
		t.Errorf("router metrics no panel of docs/grafana-dashboard.json shows: %v; add a panel (README.md says it charts every metric)", unused)
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

type fakeLeader struct{}

func (fakeLeader) IsLeader() bool { return true }
