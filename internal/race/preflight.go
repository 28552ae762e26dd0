package race

import (
	"encoding/json"

	"github.com/routerhq/router/internal/store"
)

// Plan is a job's race prepared before the job exists: its spec, routing and
// the first attempt to create with it, admitted by that provider's breaker. The
// API creates the job and the first attempt in one commit from it
// (store.NewJob.First), then hands both to SubmitNew — so the prompt is
// rendered and the routing decided once per job. A plan whose job was not
// created must be discarded.
type Plan struct {
	o       *orchestrator
	first   *store.FirstAttempt
	release func(Outcome)
}

// First is the attempt to create with the job; nil creates the job alone (its
// orchestrator then starts the first attempt as for any resumed job).
func (p *Plan) First() *store.FirstAttempt {
	if p == nil {
		return nil
	}
	return p.first
}

// Discard releases what the plan holds (the breaker's admission) when its job
// was not created (the key was already held).
func (p *Plan) Discard() {
	if p != nil && p.release != nil {
		p.release(OutcomeIgnore)
		p.release = nil
	}
}

var _ store.JobPlan = (*Plan)(nil)

// Plan decides, before a job exists, whether any provider of its route could
// take it now (context window, breakers, conformance), and which one takes
// the first attempt. When none could, ok is false and routing explains each
// provider: the API answers 503 and stores nothing. err says the job cannot be
// run at all (its prompt does not render). job needs only Operation,
// PromptVersion, Route and Input.
func (r *Runner) Plan(job *store.Job) (plan store.JobPlan, routing json.RawMessage, ok bool, err error) {
	route, found := r.cfg.Routes[job.Route]
	if !found {
		return nil, nil, true, nil // the API checks routes itself; the runner reports it
	}
	sp, err := r.specFor(job, route)
	if err != nil {
		return nil, nil, false, err
	}
	o := r.newOrchestrator(job, route, sp, r.cfg.Log)
	if len(o.candidates) == 0 {
		return nil, o.routing, false, nil
	}
	p := &Plan{o: o}
	if r.draining.Load() {
		return p, nil, true, nil // shutting down: no first attempt; the job is handed over
	}
	next := o.next()
	provider, role, release, admitted := o.choose(next, r.roleOf(route, next))
	if !admitted {
		return p, nil, true, nil
	}
	target := r.cfg.Targets[provider]
	model := target.Model
	if sp.model != "" {
		model = sp.model
	}
	p.first = &store.FirstAttempt{Provider: provider, Model: model, Role: role, Price: storePrice(r.priceFor(provider, target, model)), Routing: o.routing}
	p.release = release
	return p, nil, true, nil
}
