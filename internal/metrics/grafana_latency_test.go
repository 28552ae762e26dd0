package metrics_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// latencyStates are the attempt states whose latency /v1/providers'
// percentiles read: the FILTER of providerStatsSQL's percentile_cont, read
// from its source (internal/store/breakers.go) so that the two cannot drift.
func latencyStates(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../store/breakers.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`percentile_cont\([^)]*\) WITHIN GROUP \(ORDER BY latency_ms\) FILTER \(WHERE state IN \(([^)]*)\)\)`)
	var states []string
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		var set []string
		for _, s := range strings.Split(m[1], ",") {
			set = append(set, strings.Trim(strings.TrimSpace(s), "'"))
		}
		slices.Sort(set)
		if states != nil && !slices.Equal(set, states) {
			t.Fatalf("providerStatsSQL's percentiles filter different states: %v and %v", states, set)
		}
		states = set
	}
	if len(states) == 0 {
		t.Fatal("no percentile_cont ... FILTER (WHERE state IN (...)) in internal/store/breakers.go: has providerStatsSQL changed? update this test")
	}
	return states
}

// durationSelector matches each use of router_attempt_duration_seconds in a
// query, with its label matchers if any.
var durationSelector = regexp.MustCompile(`\brouter_attempt_duration_seconds(?:_bucket|_sum|_count)?\b(\{[^}]*\})?`)

var outcomeMatcher = regexp.MustCompile(`\boutcome\s*=~\s*"([^"]*)"`)

// router_attempt_duration_seconds observes every attempt that was sent,
// whatever its outcome — a hung primary cancelled when its hedge won is
// observed at about the hedge delay, a timeout at the timeout — and the
// dashboard's "Attempt latency p50 / p95 by provider" panel summed every
// outcome: a provider that never answers looked fast. /v1/providers'
// percentiles read only attempts the provider answered (won, lost,
// invalid). Every query of the histogram on the dashboard filters outcome to
// that same set, and each value is one the router observes under outcome.
// Found by review.
func TestGrafanaLatencyIsOfAnsweredAttempts(t *testing.T) {
	want := latencyStates(t)
	uses := 0
	for _, p := range dashboardPanels(t, "../../docs/grafana-dashboard.json") {
		for _, tg := range p.Targets {
			for _, m := range durationSelector.FindAllStringSubmatch(tg.Expr, -1) {
				uses++
				om := outcomeMatcher.FindStringSubmatch(m[1])
				if om == nil {
					t.Errorf("panel %q: %s reads router_attempt_duration_seconds of every outcome; filter it as /v1/providers does: {outcome=~%q}",
						p.Title, tg.Expr, strings.Join(want, "|"))
					continue
				}
				got := strings.Split(om[1], "|")
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("panel %q: %s filters outcome to %v, /v1/providers' percentiles to %v", p.Title, tg.Expr, got, want)
				}
			}
		}
	}
	if uses == 0 {
		t.Fatal("no panel queries router_attempt_duration_seconds")
	}

	// The label's values are the attempt states the race reports.
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	for _, state := range want {
		if !slices.Contains([]string{store.AttemptWon, store.AttemptLost, store.AttemptInvalid, store.AttemptFailed, store.AttemptUnknown, store.AttemptCancelled}, state) {
			t.Errorf("providerStatsSQL filters state %q, which is no attempt state", state)
		}
		m.AttemptFinished("p", store.RolePrimary, state, "", time.Second, providers.Usage{})
	}
	fams := scrape(t, m.Handler())
	for _, state := range want {
		if n := value(t, fams, "router_attempt_duration_seconds", map[string]string{"provider": "p", "outcome": state}); n != 1 {
			t.Errorf("router_attempt_duration_seconds{outcome=%q}: %v samples, want 1", state, n)
		}
	}
}
