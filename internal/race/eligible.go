package race

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/routerhq/router/internal/store"
)

// HalfOpenView is the optional part of an Admission (a circuit breaker set)
// that says, from memory and without taking a slot, whether provider's
// breaker is half-open.
type HalfOpenView interface {
	HalfOpen(provider string) bool
}

// HalfOpen says whether the circuit breaker of any target of route (or of a
// model a request may send to one: ModelBreakers) is half-open now, when its
// slots are a probe or a few: the API then looks an Idempotency-Key up before
// planning, so that a replay does not hold a probe it would only hand back.
// False when the Admission does not say.
func (r *Runner) HalfOpen(route string) bool {
	v, ok := r.cfg.Admission.(HalfOpenView)
	rt := r.cfg.Routes[route]
	if !ok || rt == nil {
		return false
	}
	mb, _ := r.cfg.Admission.(ModelBreakers)
	for _, p := range rt.Providers {
		if v.HalfOpen(p) {
			return true
		}
		if mb == nil {
			continue
		}
		for _, name := range mb.SentBreakers(p) { // the breakers of the models a request may send
			if v.HalfOpen(name) {
				return true
			}
		}
	}
	return false
}

// ErrRouteNotConfigured is Eligible's error for a job whose route this
// replica does not configure (renamed or removed by a configuration change,
// or added by a newer one this replica does not run yet): it cannot judge the
// job, nor run it (cannotRun).
var ErrRouteNotConfigured = errors.New("route not configured on this replica")

// Eligible is Plan's verdict without its first attempt: whether any provider
// of the job's route could take it now (context window, breakers,
// conformance), judged from the breakers' states as routing explains them
// (admissible), so no breaker admission is taken and handed back. When none
// could, ok is false and routing explains each provider. err says the job
// cannot be run at all (its prompt does not render), or by this replica:
// ErrRouteNotConfigured, wrapped with the route's name, when its route is not
// configured here (Plan lets such a job through: the API checks a new job's
// route itself, but a stored job's route may be another configuration's).
func (r *Runner) Eligible(job *store.Job) (routing json.RawMessage, ok bool, err error) {
	route, found := r.cfg.Routes[job.Route]
	if !found {
		return nil, false, fmt.Errorf("%w: route %q", ErrRouteNotConfigured, job.Route)
	}
	sp, err := r.specFor(job, route)
	if err != nil {
		return nil, false, err
	}
	decisions := r.decide(route, sp)
	for _, d := range decisions {
		if d.Eligible {
			return nil, true, nil
		}
	}
	return appendDecisions(nil, decisions), false, nil
}
