package race

import (
	"encoding/json"

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

// Eligible is Plan's verdict without its first attempt: whether any provider
// of the job's route could take it now (context window, breakers,
// conformance), judged from the breakers' states as routing explains them
// (admissible), so no breaker admission is taken and handed back. When none
// could, ok is false and routing explains each provider. err says the job
// cannot be run at all (its prompt does not render).
func (r *Runner) Eligible(job *store.Job) (routing json.RawMessage, ok bool, err error) {
	route, found := r.cfg.Routes[job.Route]
	if !found {
		return nil, true, nil // as Plan: the runner reports it
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
