package metrics

import "github.com/routerhq/router/internal/store"

// AttemptRoles are the values of the role label of router_attempts_started_total
// and router_attempts_total.
var AttemptRoles = []string{store.RolePrimary, store.RoleRetry, store.RoleFailover, store.RoleHedge}

// AttemptOutcomes are the values of router_attempts_total's outcome label.
var AttemptOutcomes = []string{store.AttemptWon, store.AttemptLost, store.AttemptFailed, store.AttemptInvalid,
	store.AttemptUnknown, store.AttemptCancelled, "abandoned", "unsent"}

// zeroSeries exposes at 0, from start-up, the race's counter series whose
// label values are known now: a series that appears with its first event has
// no earlier sample, so rate() and increase() over it miss that event (a
// target's first lost race, first hedge, a route's first denied hedge).
// Per target: its attempts started by role (4), ended by role and outcome
// (4 × 8, a fixed set), races lost, hedges started and won; per route: hedges
// denied. router_attempt_errors_total is left to appear with its first error:
// its kinds are many (an adapter's errors) and most never occur for a given
// target, so a series for each would multiply the target count by them.
func (m *Metrics) zeroSeries(targets, routes []string) {
	for _, p := range targets {
		for _, role := range AttemptRoles {
			m.attemptsStart.WithLabelValues(p, role)
			for _, outcome := range AttemptOutcomes {
				m.attempts.WithLabelValues(p, role, outcome)
			}
		}
		m.racesLost.WithLabelValues(p)
		m.hedgesStarted.WithLabelValues(p)
		m.hedgesWon.WithLabelValues(p)
	}
	for _, r := range routes {
		m.hedgesDenied.WithLabelValues(r)
	}
}
