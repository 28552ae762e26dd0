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

// The same held for the race's counters: a target's first lost race, first
// hedge started or won, and a route's first denied hedge were each invisible
// to rate(router_races_lost_total[5m]) and the like (docs/operations.md names
// races lost against hedges started as the sign of hedging too early), as
// were each target's first attempt of a role and first attempt of an outcome.
// Each configured target's and route's series exist at 0 before any job;
// router_attempt_errors_total is left out (its kinds are many). Found by
// review.
func TestRaceCountersExistAtZero(t *testing.T) {
	targets, routes := []string{"primary", "fallback"}, []string{"chat", "batch"}
	m := metrics.New(metrics.Options{NoProcessCollectors: true, Targets: targets, Routes: routes})
	fams := scrape(t, m.Handler())
	has := func(name string, labels map[string]string) {
		t.Helper()
		if _, ok := fams[name]; !ok {
			t.Fatalf("no %s before any job: rate() misses its first event", name)
		}
		if got := value(t, fams, name, labels); got != 0 {
			t.Errorf("%s%v = %v before any job, want 0", name, labels, got)
		}
	}
	count := func(name string, want int) {
		t.Helper()
		if n := len(fams[name].GetMetric()); n != want {
			t.Errorf("%s has %d series before any job, want %d", name, n, want)
		}
	}
	for _, p := range targets {
		for _, name := range []string{"router_races_lost_total", "router_hedges_started_total", "router_hedges_won_total"} {
			has(name, map[string]string{"provider": p})
		}
		for _, role := range metrics.AttemptRoles {
			has("router_attempts_started_total", map[string]string{"provider": p, "role": role})
			for _, outcome := range metrics.AttemptOutcomes {
				has("router_attempts_total", map[string]string{"provider": p, "role": role, "outcome": outcome})
			}
		}
	}
	for _, r := range routes {
		has("router_hedges_denied_total", map[string]string{"route": r})
	}
	for _, name := range []string{"router_races_lost_total", "router_hedges_started_total", "router_hedges_won_total"} {
		count(name, len(targets))
	}
	count("router_attempts_started_total", len(targets)*4)
	count("router_attempts_total", len(targets)*4*8)
	count("router_hedges_denied_total", len(routes))
	if _, ok := fams["router_attempt_errors_total"]; ok {
		t.Errorf("router_attempt_errors_total has series before any error: one per kind would multiply the targets by the kinds")
	}
}
