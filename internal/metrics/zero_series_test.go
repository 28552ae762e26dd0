package metrics_test

import (
	"testing"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
)

// A counter series that first appears with its first event has no earlier
// sample, so rate() and increase() over it miss that event: each process's
// first unknown job never fired the alert on
// rate(router_jobs_settled_total{state="unknown"}[5m]) (docs/operations.md),
// nor did a breaker's first opening fire one on its transitions. Every
// documented job state, and every transition of each configured breaker, is
// exposed at 0 before any job runs (as webhook delivery outcomes already
// were). Found by review.
func TestSettledStatesAndBreakerTransitionsExistAtZero(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true, Breakers: fakeBreakers{"primary": "closed", "fallback": "closed"}})
	fams := scrape(t, m.Handler())
	states := []string{store.JobSucceeded, store.JobFailed, store.JobUnknown, store.JobCancelled}
	for _, state := range states {
		if _, ok := fams["router_jobs_settled_total"]; !ok {
			t.Fatalf("no router_jobs_settled_total before any job: rate() misses each state's first job")
		}
		if got := value(t, fams, "router_jobs_settled_total", map[string]string{"state": state}); got != 0 {
			t.Errorf("router_jobs_settled_total{state=%q} = %v before any job, want 0", state, got)
		}
	}
	if n := len(fams["router_jobs_settled_total"].GetMetric()); n != len(states) {
		t.Errorf("router_jobs_settled_total has %d series before any job, want the %d documented states", n, len(states))
	}
	for _, provider := range []string{"primary", "fallback"} {
		for _, to := range []string{"closed", "half-open", "open"} {
			if _, ok := fams["router_breaker_transitions_total"]; !ok {
				t.Fatalf("no router_breaker_transitions_total before any transition")
			}
			if got := value(t, fams, "router_breaker_transitions_total", map[string]string{"provider": provider, "to": to}); got != 0 {
				t.Errorf("router_breaker_transitions_total{provider=%q,to=%q} = %v before any transition, want 0", provider, to, got)
			}
		}
	}
}
