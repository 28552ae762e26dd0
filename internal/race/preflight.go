package race

import (
	"context"
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

// First is the attempt to create with the job; nil (a plan made while the
// runner drains) creates the job alone (it is then handed over, and started
// as any resumed job is).
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
// provider: the API answers 503 and stores nothing. So it is too when every
// eligible provider's breaker refuses the admission although its state
// allowed it a moment before (a half-open breaker's probe taken meanwhile):
// routing then gives each refusal as the provider's reason. err says the job cannot be
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
	if !o.anyEligible() {
		return nil, o.routing, false, nil
	}
	p := &Plan{o: o}
	if r.draining.Load() {
		return p, nil, true, nil // shutting down: no first attempt; the job is handed over
	}
	// Not a target its breaker refused a moment ago (deferred): the first
	// choice asks no breaker routing already saw refuse.
	next := o.nextExcept(o.deferredSet())
	// The peek above (decideRefusals) took no admission: a breaker may refuse
	// now what it allowed then (a half-open breaker's probe taken meanwhile
	// by another request). A refusal noted in routing goes with the first
	// attempt (o.routing): nothing is written here, the job does not exist.
	provider, role, release, admitted := o.choose(context.Background(), next, r.roleOf(route, next))
	if !admitted {
		// No target takes the job now after all: as when the peek saw it,
		// the API answers 503 and stores nothing, rather than create a job
		// with no attempt that fails at once.
		return nil, o.refusedRouting(), false, nil
	}
	target := r.cfg.Targets[provider]
	model := target.Model
	if sp.model != "" {
		model = sp.model
	}
	p.first = &store.FirstAttempt{Provider: provider, Model: model, Role: role, Price: storePrice(r.priceFor(provider, target, model)), Routing: o.routing,
		Lookup: sendsLookup(target)}
	p.release = release
	return p, nil, true, nil
}
