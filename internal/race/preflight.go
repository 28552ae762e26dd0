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
	// deferred: the first attempt's target was chosen without taking its
	// breaker's admission (PlanDeferred); AdmitFirst takes it.
	deferred bool
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
// was not created (the key was already held). A plan made by PlanDeferred
// holds none until AdmitFirst: discarding it touches no breaker.
func (p *Plan) Discard() {
	if p != nil && p.release != nil {
		p.release(OutcomeIgnore)
		p.release = nil
	}
}

var _ store.JobPlan = (*Plan)(nil)

// Plan decides, before a job exists, whether any provider of its route could
// take it now (context window, breakers, conformance), and which one takes
// the first attempt, whose breaker admission it takes. When none could, ok is
// false and routing explains each provider: the API answers 503 and stores
// nothing. err says the job cannot be run at all (its prompt does not
// render). job needs only Operation, PromptVersion, Route and Input.
func (r *Runner) Plan(job *store.Job) (plan store.JobPlan, routing json.RawMessage, ok bool, err error) {
	return r.plan(job, false)
}

// PlanDeferred is Plan for a job whose idempotency key may already hold a job
// (a replay): the first attempt's target is chosen by what the breakers say
// without taking a slot (as routing reads them), and its admission is left to
// AdmitFirst, once the claim has created the job. A replay, whose claim finds
// the key held, then never takes a breaker's admission: it neither holds a
// half-open breaker's probe while its claim is in flight (a new job would be
// refused the probe meanwhile, and skip a recovered primary) nor counts in
// the breaker's requests. No database round trip is added: the claim stays
// the only commit before the provider call. A job created from such a plan
// must go through AdmitFirst before SubmitNew.
func (r *Runner) PlanDeferred(job *store.Job) (plan store.JobPlan, routing json.RawMessage, ok bool, err error) {
	return r.plan(job, true)
}

func (r *Runner) plan(job *store.Job, deferred bool) (store.JobPlan, json.RawMessage, bool, error) {
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
	provider, role := next, r.roleOf(route, next)
	var release func(Outcome)
	admitted := next != ""
	if !deferred {
		provider, role, release, admitted = o.choose(next, role)
	}
	// Deferred, the candidates are those whose breakers admit an attempt now
	// (decide asked them, without taking a slot), and next is the first of
	// them the gate allows.
	if !admitted {
		return p, nil, true, nil
	}
	target := r.cfg.Targets[provider]
	model := target.Model
	if sp.model != "" {
		model = sp.model
	}
	p.first = &store.FirstAttempt{Provider: provider, Model: model, Role: role, Price: storePrice(r.priceFor(provider, target, model)), Routing: o.routing}
	p.release, p.deferred = release, deferred
	return p, nil, true, nil
}

// AdmitFirst takes the breaker admission of the first attempt of a plan made
// by PlanDeferred, for job, which CreateJob has just created from the plan
// (not for a job found holding the key: that plan is discarded, and never
// takes one). ok: the attempt is sent as planned (SubmitNew).
//
// Otherwise the breaker refused it since the plan looked — another new job
// took a half-open breaker's last probe, or the breaker opened: the attempt,
// never sent, is recorded as such (store.RecordNotSent: it counts neither as
// its target tried nor against max_attempts) and the plan gives it up, so
// SubmitNew runs the job as any resumed job, whose orchestrator chooses its
// first attempt again, with the breakers' admission. job, as CreateJob
// returned it, no longer says what its first attempt is: read it again to
// answer with it. Only this rare path writes to the database.
//
// A nil plan, one without a first attempt or one made by Plan is admitted
// already.
func (p *Plan) AdmitFirst(ctx context.Context, job *store.Job) (ok bool) {
	if p == nil || p.first == nil || !p.deferred {
		return true
	}
	p.deferred = false
	r := p.o.r
	if r.cfg.Admission == nil {
		p.release = func(Outcome) {}
		return true
	}
	provider := p.first.Provider
	release, ok, why := r.cfg.Admission.Admit(provider)
	if ok {
		p.release = release
		return true
	}
	p.first = nil
	r.cfg.Log.Info("provider not admitted for the job's first attempt, created with the job; choosing again",
		"job_id", job.ID, "provider", provider, "reason", why)
	if len(job.Attempts) == 1 {
		a := job.Attempts[0]
		if err := r.cfg.Store.RecordNotSent(context.WithoutCancel(ctx), a.ID,
			"the request was never sent: "+provider+" was not admitted ("+why+")"); err != nil {
			r.cfg.Log.Warn("could not record the job's first attempt as never sent", "job_id", job.ID, "attempt_id", a.ID, "err", err)
		}
	}
	return false
}
