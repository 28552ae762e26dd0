package race

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// RecoveryConfig tunes the background recovery loop.
type RecoveryConfig struct {
	Interval time.Duration // how often to look; default a third of the lease
	// Batch is how many jobs one claim takes (default 20): a pass claims
	// batch after batch while they come back full, up to maxAdoptBatches
	// of them (adopt), and lists that many unknown attempts to reconcile.
	Batch int
	// Leader, when set, gates the scans: only the replica it says leads
	// expires leases, adopts orphans at once, fails those no replica could
	// run, and reconciles (one elected replica instead of all of them); the
	// others only adopt orphans they can run that the leader has left for a
	// lease (AdoptOnce). Nil: this replica always leads. A Leader that is
	// also a LeadGains (internal/maintenance.Elector) gets a pass as soon
	// as this replica gains the lead, not at the next tick.
	Leader Leader
	// Reconcilers bounds the provider lookups in flight at once; default 8.
	Reconcilers int
	// storeTimeout bounds each database call of a lookup's resolution (0:
	// reconcileStoreTimeout); set only by tests (export_test).
	storeTimeout time.Duration
}

// Leader says whether this replica leads now (see internal/maintenance).
type Leader interface{ IsLeader() bool }

// LeadGains is an optional part of a Leader, found by type assertion: Gained
// returns a channel closed when this replica next gains the lead (each gain
// closes the one handed out before it; internal/maintenance.Elector). With
// it RunRecovery runs a leader's pass as soon as this replica leads: a
// draining leader steps down at once so that another replica adopts the jobs
// it hands over (SPEC §17, docs/operations.md), and the new leader's elector
// takes the lease within a third of the leader lease — but its recovery,
// waking only on its own ticker, noticed up to a third of execution.lease
// later.
type LeadGains interface{ Gained() <-chan struct{} }

// RunRecovery runs until ctx ends: it turns expired attempt leases into
// `unknown` (never re-dispatching), takes over jobs whose orchestrator died
// (never started, or between attempts), and reconciles unknown attempts with
// providers that can look them up. Lookups run concurrently beside the scans
// (at most Reconcilers at once, never two for one attempt): a slow provider
// lookup cannot delay lease expiry or orphan pickup.
func (r *Runner) RunRecovery(ctx context.Context, rc RecoveryConfig) {
	if rc.Interval <= 0 {
		rc.Interval = r.cfg.Lease / 3
	}
	if rc.Batch <= 0 {
		rc.Batch = 20
	}
	rec := newReconciler(rc.Reconcilers)
	if rc.storeTimeout > 0 {
		rec.storeTimeout = rc.storeTimeout
	}
	defer rec.wait()
	tick := time.NewTicker(rc.Interval)
	defer tick.Stop()
	gains, _ := rc.Leader.(LeadGains)
	for {
		// Taken before IsLeader is asked: a gain after the question closes
		// this channel, so none is missed (one before it is answered yes).
		var gained <-chan struct{} // nil: never ready
		if gains != nil {
			gained = gains.Gained()
		}
		if rc.Leader == nil || rc.Leader.IsLeader() {
			r.scan(ctx, rc.Batch)
			r.reconcile(ctx, rc.Batch, rec)
		} else {
			r.AdoptOnce(ctx, rc.Batch)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-gained:
		}
	}
}

// RecoverOnce is one recovery pass that returns when its lookups are done.
func (r *Runner) RecoverOnce(ctx context.Context, batch int) {
	r.scan(ctx, batch)
	rec := newReconciler(batch)
	r.reconcile(ctx, batch, rec)
	rec.wait()
}

// passTimeout bounds each step of a recovery pass (lease expiry, adoption,
// the listing of unknown attempts): a step stuck on something unforeseen (a
// connection that stopped answering) ends, and the next tick starts afresh,
// instead of stopping recovery for good while the elector keeps renewing this
// replica's leadership. Waits for rows other transactions hold are bounded
// more tightly by the store (ExpireAttemptLeases, Resolution.LockWait). A step
// cut short keeps what it committed; the next pass goes on from there.
const passTimeout = time.Minute

// reconcileLockWait bounds a reconciler's wait for the job it resolves when
// another transaction holds it (Resolution.LockWait): past it the attempt is
// left unknown and looked up again by a later pass, instead of holding one of
// the Reconcilers slots for as long as the other transaction lasts.
const reconcileLockWait = 2 * time.Second

// reconcileStoreTimeout bounds each database call of a reconciler's lookup
// (reading the job to judge or bill what the provider recorded, the
// resolution, the read after it): a call whose connection stopped answering
// (a dropped flow, a frozen database host or proxy) ends, the attempt is left
// unknown and looked up again by a later pass, instead of holding one of the
// Reconcilers slots until TCP gives up, or for ever behind a proxy — with
// every slot so held, the leader reconciled nothing more. It leaves room for
// the resolution's lock wait (reconcileLockWait) and a slow commit. The
// provider's lookup is bounded by its adapter (the target's timeout).
const reconcileStoreTimeout = 10 * time.Second

// scan expires attempt leases (counting the jobs that settles unknown) and
// adopts orphaned jobs.
func (r *Runner) scan(ctx context.Context, batch int) {
	log := r.cfg.Log
	pass, cancel := context.WithTimeout(ctx, passTimeout)
	jobs, err := r.cfg.Store.ExpireAttemptLeases(pass)
	cancel()
	if len(jobs) > 0 {
		log.Warn("recovery: attempts whose router died are now unknown", "jobs", jobs)
		cctx, cancel := context.WithTimeout(ctx, passTimeout)
		r.countExpiredUnknown(cctx, jobs)
		cancel()
	}
	switch {
	case err == nil || ctx.Err() != nil:
	case store.Busy(err):
		// Jobs whose rows another transaction holds: left for the next
		// pass (an operator's transaction left open, a replica cut off in
		// the middle of one, until PostgreSQL notices).
		log.Warn("recovery: some expired attempt leases wait for the next pass", "err", err)
	default:
		log.Error("recovery: could not expire attempt leases", "err", err)
	}
	r.adopt(ctx, batch, r.runnable(true))
}

// countExpiredUnknown counts (Observer.JobSettled) those of jobs, which lease
// expiry has just given an unknown attempt, that it settled `unknown`. The
// replica whose run died with them cannot count them: without this, a job
// left unknown by a replica killed mid-call never reached
// router_jobs_settled_total{state="unknown"}, which operators alert on
// (docs/operations.md).
//
// ExpireAttemptLeases names every job that got an unknown attempt, settled or
// not: a job with another attempt still in flight (a hedge created after the
// dead replica's last renewal expires later) stays running, and is named
// again by the pass that expires its last attempt and settles it. So a job is
// counted only if it is `unknown` now. An unknown job has no attempt in
// flight (CreateAttempt refuses it; a job settles only when none is left), so
// one named here was running until this expiry settled it, and is named once
// for it; a job that had already ended is never named (its attempts become
// lost or cancelled). Only a change within the one round trip between the
// expiry and the read escapes this: a job cancelled or resolved meanwhile is
// not counted (nor is one whose read fails), and one the rest of its run
// settled meanwhile is counted here too.
func (r *Runner) countExpiredUnknown(ctx context.Context, jobs []string) {
	for _, id := range jobs {
		state, err := r.cfg.Store.JobStateAny(ctx, id)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				r.cfg.Log.Warn("recovery: could not read the state of a job whose attempt lease expired; not counted as settled", "job_id", id, "err", err)
			}
		case state == store.JobUnknown:
			r.cfg.Observer.JobSettled(store.JobUnknown)
		}
	}
}

// AdoptOnce is the recovery pass of a replica that is not the maintenance
// leader, every tick: it adopts only the orphaned jobs it can run that have
// waited a lease for the leader — during a rolling update, those whose prompt
// version or route the leader lacks (stranded.go); otherwise those a leader
// left behind (between two leaders, or one that is behind). Expiring leases,
// failing the jobs no replica can run and reconciling stay the leader's.
func (r *Runner) AdoptOnce(ctx context.Context, batch int) {
	r.adopt(ctx, batch, r.runnable(false))
}

// maxAdoptBatches bounds the claims of one recovery pass (adopt): with the
// default batch, 1,000 jobs. A drain that runs out or a crash hands over
// every job of a replica at once; one claim of a batch per pass (a third of
// execution.lease) left the last of 200 such jobs waiting some 100 s while
// callers that resent their key waited on a pending job, and jobs released
// for a circuit breaker (every pass, the oldest first) filled each batch
// while newer orphans waited. The bound keeps a pass's length in check
// (every claim is a transaction; nothing in this process limits the jobs it
// runs at once, so the bound is on the pass): what is beyond it waits for
// the next pass.
const maxAdoptBatches = 50

// adopt takes the leases of orphaned jobs that can admits, batch at a time,
// and runs them. It claims again while a batch comes back full and brought
// a job this pass had not claimed yet, up to maxAdoptBatches claims: a batch
// that is not full took every orphan there was, and one of only jobs this
// pass claimed already (released again meanwhile: a job that circuit
// breakers refuse) would only run them again. It stops when the runner
// begins stopping or the pass's context ends.
func (r *Runner) adopt(ctx context.Context, batch int, can *store.Runnable) {
	pass, cancel := context.WithTimeout(ctx, passTimeout)
	defer cancel()
	claimed := map[string]bool{}
	for range maxAdoptBatches {
		if r.isStopping() || pass.Err() != nil {
			return
		}
		ids, fresh := r.adoptBatch(ctx, pass, batch, can, claimed)
		if len(ids) < batch || !fresh {
			return
		}
	}
}

// adoptBatch is one claim of adopt: it takes the leases of up to batch
// orphans and runs them, and reports those it claimed and whether any of
// them is not in claimed (which it then adds them to).
func (r *Runner) adoptBatch(ctx, pass context.Context, batch int, can *store.Runnable, claimed map[string]bool) (ids []string, fresh bool) {
	log := r.cfg.Log
	ids, err := r.cfg.Store.ClaimOrphans(pass, r.cfg.LeaseOwner, r.cfg.Lease, batch, can)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("recovery: could not claim orphaned jobs", "err", err)
		}
		return nil, false
	}
	for _, id := range ids {
		fresh = fresh || !claimed[id]
		claimed[id] = true
		if can.OthersAfter > 0 && r.failStranded(pass, id) {
			continue
		}
		log.Info("recovery: taking over a job whose orchestrator stopped", "job_id", id)
		if !r.submit(id, nil, nil, trace.SpanContext{}) {
			// Claimed as this runner began stopping (SPEC §17): it will not
			// run the job, so it gives the lease back at once for a live
			// replica's next pass, instead of holding it until it expires.
			rctx, cancel := r.exitContext(ctx)
			if err := r.cfg.Store.ReleaseJobLease(rctx, id, r.cfg.LeaseOwner); err != nil {
				log.Warn("recovery: could not give back a job claimed while stopping", "job_id", id, "err", err)
			}
			cancel()
		}
	}
	return ids, fresh
}

// isStopping reports whether the runner has begun stopping (Drain, Stop).
func (r *Runner) isStopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopping
}

// reconciler runs provider lookups in the background, bounded, one per attempt.
//
// It remembers the attempts whose last lookup left them unknown (an error, a
// timeout, an answer that cannot be judged) and those with a lookup in flight,
// so that a pass lists that many more attempts and looks up the others first:
// attempts that keep failing their lookups (a provider whose lookup endpoint
// is broken, a job whose route is gone) would otherwise fill every batch, the
// oldest first, and no other unknown attempt would ever be reconciled.
type reconciler struct {
	slots    chan struct{}
	mu       sync.Mutex
	inflight map[string]bool
	erred    map[string]bool // last lookup left the attempt unknown
	// noSpec: attempts whose found answer could not be judged because
	// their job's request cannot be rebuilt here (errNoSpec), already
	// warned about (firstNoSpec).
	noSpec map[string]bool
	// unconfigured: unknown attempts on targets this router does not
	// configure, which it never looks up, already warned about
	// (warnUnconfigured).
	unconfigured map[string]bool
	// untrusted: attempts sent without the lookup metadata (or before the
	// store recorded whether they were) that their provider has no record
	// of, already warned about (firstUntrusted).
	untrusted map[string]bool
	// storeTimeout bounds each database call of a lookup's resolution
	// (reconcileStoreTimeout unless a test sets RecoveryConfig's).
	storeTimeout time.Duration
	wg           sync.WaitGroup
}

func newReconciler(n int) *reconciler {
	if n <= 0 {
		n = 8
	}
	return &reconciler{slots: make(chan struct{}, n), inflight: map[string]bool{}, erred: map[string]bool{}, noSpec: map[string]bool{},
		unconfigured: map[string]bool{}, untrusted: map[string]bool{}, storeTimeout: reconcileStoreTimeout}
}

// storeBound is how long one database call of a lookup's resolution may
// take (storeTimeout; reconcileStoreTimeout for a nil reconciler).
func (rc *reconciler) storeBound() time.Duration {
	if rc != nil && rc.storeTimeout > 0 {
		return rc.storeTimeout
	}
	return reconcileStoreTimeout
}

// storeContext is ctx bounded for one database call of a lookup's
// resolution (storeBound).
func (rc *reconciler) storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, rc.storeBound())
}

// firstNoSpec reports whether this is the first time attempt id's found
// answer could not be judged because its job's request cannot be rebuilt
// (errNoSpec), and remembers it. Such an attempt is looked up again on every
// pass (the route or prompt version may be deployed again), but warned about
// once: a warning a pass for ever, per attempt, buried the logs. A nil
// reconciler warns every time.
func (rc *reconciler) firstNoSpec(id string) bool {
	return rc.firstIn(func(rc *reconciler) map[string]bool { return rc.noSpec }, id)
}

// firstIn reports whether attempt id is not yet in the memory of warnings
// given that set picks, and adds it there. A nil reconciler warns every time.
func (rc *reconciler) firstIn(set func(*reconciler) map[string]bool, id string) bool {
	if rc == nil {
		return true
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	warned := set(rc)
	if warned[id] {
		return false
	}
	warned[id] = true
	return true
}

// skipped is how many attempts a listing may hold that the pass will not look
// up first: those in flight and those whose last lookup failed.
func (rc *reconciler) skipped() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.inflight) + len(rc.erred)
}

// order puts the attempts whose last lookup failed after the others (each
// group in listing order), and forgets failures of attempts that are no
// longer unknown: when the listing is not full (complete), every unknown
// attempt is in it.
func (rc *reconciler) order(unknown []store.UnknownAttempt, complete bool) []store.UnknownAttempt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.erred) == 0 {
		return unknown
	}
	out := make([]store.UnknownAttempt, 0, len(unknown))
	var later []store.UnknownAttempt
	listed := make(map[string]bool, len(unknown))
	for _, u := range unknown {
		listed[u.AttemptID] = true
		if rc.erred[u.AttemptID] {
			later = append(later, u)
		} else {
			out = append(out, u)
		}
	}
	if complete {
		for id := range rc.erred {
			if !listed[id] {
				delete(rc.erred, id)
				delete(rc.noSpec, id)
				delete(rc.untrusted, id)
			}
		}
	}
	return append(out, later...)
}

// start runs fn for attempt id unless a lookup of it is in flight or every
// slot is busy (the next pass tries again); it never blocks. fn reports
// whether it left the attempt unknown.
func (rc *reconciler) start(id string, fn func() (unresolved bool)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.inflight[id] {
		return
	}
	select {
	case rc.slots <- struct{}{}:
	default:
		return
	}
	rc.inflight[id] = true
	rc.wg.Add(1)
	go func() {
		defer rc.wg.Done()
		unresolved := true
		defer func() {
			rc.mu.Lock()
			delete(rc.inflight, id)
			if unresolved {
				rc.erred[id] = true
			} else {
				delete(rc.erred, id)
			}
			rc.mu.Unlock()
			<-rc.slots
		}()
		unresolved = fn()
	}()
}

func (rc *reconciler) wait() { rc.wg.Wait() }

// reconcile asks providers with a lookup capability what became of unknown
// attempts, and resolves those the provider can answer for; it warns about
// those on targets it does not configure, which it cannot look up
// (warnUnconfigured). The lookups run in
// rec's background slots; reconcile itself returns at once.
func (r *Runner) reconcile(ctx context.Context, batch int, rec *reconciler) {
	r.warnUnconfigured(ctx, batch, rec)
	var names []string
	lookers := map[string]providers.Looker{}
	for name, t := range r.cfg.Targets {
		if l, ok := providers.LookerOf(t.Provider); ok {
			names = append(names, name)
			lookers[name] = l
		}
	}
	if len(names) == 0 {
		return
	}
	limit := batch + rec.skipped()
	pass, cancel := context.WithTimeout(ctx, passTimeout)
	unknown, err := r.cfg.Store.ListUnknownAttempts(pass, names, r.cfg.ReconcileAfter, limit)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Log.Error("reconcile: could not list unknown attempts", "err", err)
		}
		return
	}
	for _, u := range rec.order(unknown, len(unknown) < limit) {
		rec.start(u.AttemptID, func() bool { return r.reconcileOne(ctx, u, lookers[u.Provider], rec) })
	}
}

// reconcileOne looks an unknown attempt up and resolves it; unresolved is true
// when the attempt was left unknown for a later pass (the lookup failed, or
// its answer could not be judged or recorded). rec remembers the attempts
// already warned about (firstNoSpec).
//
// A panic in it — the adapter's Lookup on whatever the provider sent, or the
// judging of the answer it found — leaves the attempt unknown, logged with
// its stack, and the next pass looks it up again: a provider cannot crash the
// maintenance leader, and each new leader after it (SPEC §17).
func (r *Runner) reconcileOne(ctx context.Context, u store.UnknownAttempt, l providers.Looker, rec *reconciler) (unresolved bool) {
	log := r.cfg.Log.With("job_id", u.JobID, "attempt_id", u.AttemptID, "provider", u.Provider)
	defer func() {
		if v := recover(); v != nil {
			log.Error("reconcile: the lookup panicked; leaving the attempt unknown", "panic", v, "stack", string(debug.Stack()))
			unresolved = true
		}
	}()
	resp, found, err := l.Lookup(ctx, u.AttemptID)
	res := store.Resolution{JobID: u.JobID, Seq: u.Seq, Outcome: "failed", LockWait: reconcileLockWait,
		Note: noRecordNote}
	switch {
	case found && err != nil:
		res.Note = "reconciled: the provider's record of this request is a failure: " + err.Error()
		// A completion the provider refused or filtered was billed: its
		// usage is recorded, as the live attempt would have recorded it.
		var pe *providers.Error
		if errors.As(err, &pe) {
			// The attempt fails with the provider's recorded error, not the
			// timeout that made it unknown: the resumed race acts on it as
			// the live race would have (prepare: a content-policy rejection
			// is not failed over, SPEC §6.3), and the job's reason and the
			// chat endpoint's status say what the provider did.
			res.Error = attemptError(recordedFailure(pe, u.Provider))
		}
		if pe != nil {
			// Bounded, priced whole and estimated when it has no split, as
			// the live attempt's (billedUsage); estimated when the record
			// has no usage, as a live failure received the same way is
			// (estimatedUsage).
			sctx, cancel := rec.storeContext(ctx)
			billed, ok, berr := r.reconciledBilled(sctx, u, pe)
			cancel()
			if berr != nil {
				log.Warn("reconcile: cannot read the job to bound or estimate the failure's usage; will try again", "err", berr)
				return true
			}
			if ok {
				res.Usage = billed
			}
			if pe.Usage != nil {
				res.ProviderResponseID, res.ResponseModel = pe.ResponseID, pe.ResponseModel
			}
		}
	case err != nil:
		log.Warn("reconcile: lookup failed; will try again", "err", err)
		return true
	case found:
		res.Note = "reconciled: the provider completed this request"
		sctx, cancel := rec.storeContext(ctx)
		st, jerr := r.storedAttempt(sctx, u)
		cancel()
		switch {
		case errors.Is(jerr, errNoSpec) && rec.firstNoSpec(u.AttemptID):
			log.Warn("reconcile: the provider completed this request, but this router cannot judge its answer; "+
				"leaving the attempt unknown and looking it up again on each pass (warned once). It resolves itself "+
				"once the leader runs the job's route and prompt version again; otherwise only an operator ends "+
				"the job: resolve the attempt failed (its answer is then dropped, and the job goes on to its "+
				"next target) or cancel the job (docs/operations.md)", "err", jerr)
			return true
		case errors.Is(jerr, errNoSpec):
			log.Debug("reconcile: still cannot judge the answer; leaving the attempt unknown", "err", jerr)
			return true
		case jerr != nil:
			log.Warn("reconcile: cannot read the job to judge the answer; leaving the attempt unknown, will try again", "err", jerr)
			return true
		}
		// Bounded, priced whole and estimated where the provider reported
		// none, no split or no output, as the live answer's (answerUsage);
		// a chat job's completion carries the same usage.
		if billed, ok := answerUsage(st.t, st.sp, st.a, resp); ok {
			resp.Usage = billed
		}
		res.Usage, res.ProviderResponseID, res.ResponseModel = resp.Usage, resp.ResponseID, resp.Model
		doc, violations, jerr := judgeAnswer(st.sp, resp, r.cfg.Log)
		if jerr != nil {
			log.Warn("reconcile: cannot judge the answer; leaving the attempt unknown", "err", jerr)
			return true
		}
		if len(violations) > 0 {
			// Stored `invalid`, with its validation errors and the live
			// race's invalid_output error (fail over, SPEC §6.3), as a late
			// answer or the live race stores one: not `failed` with the
			// lease expiry's error, which the resumed race would retry on
			// the same target as a transient failure.
			res.Note = "reconciled: the provider completed this request, but its output breaks the contract: " + violations[0].String()
			res.ValidationErrors = violations
			res.Error = invalidOutputError(violations, attemptResult{state: store.AttemptInvalid,
				callers: st.sp.callers != nil && st.sp.callers(violations[0])})
		} else {
			res.Outcome, res.Result = "succeeded", doc
		}
	case !u.Lookup:
		// No record of a request that was not sent to be recorded proves
		// nothing (SPEC §6.8: never re-dispatch blindly).
		r.warnUntrusted(log, u, rec)
		return true
	}
	sctx, cancel := rec.storeContext(ctx)
	resume, err := r.cfg.Store.ResolveAttempt(sctx, res)
	cancel()
	if err != nil {
		if store.Busy(err) {
			log.Warn("reconcile: the job is held by another transaction; will try again", "err", err)
			return true
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			log.Warn("reconcile: the database did not answer the resolution in time; leaving the attempt unknown, will try again",
				"timeout", rec.storeBound(), "err", err)
			return true
		}
		if !errors.Is(err, store.ErrStateConflict) && !errors.Is(err, store.ErrJobFinished) {
			log.Error("reconcile: could not resolve", "err", err)
			return true
		}
		return false // settled otherwise meanwhile
	}
	log.Info("reconcile: resolved unknown attempt", "outcome", res.Outcome)
	if resume {
		r.SubmitID(u.JobID)
	} else if res.Outcome == "failed" && res.Note == noRecordNote {
		sctx, cancel := rec.storeContext(ctx)
		r.warnRouterDeaths(sctx, log, u.JobID)
		cancel()
	}
	return false
}

// warnRouterDeaths logs, at warn, that the resolution of an attempt its
// provider has no record of failed job jobID rather than resuming it
// because its routers kept dying before its send (store.RouterDeathLimit:
// the store decides, under the job's lock; this only reads what it did).
func (r *Runner) warnRouterDeaths(ctx context.Context, log *slog.Logger, jobID string) {
	j, err := r.cfg.Store.GetJobAny(ctx, jobID)
	if err != nil || !store.EndedByRouterDeaths(j) {
		return // still unknown (another attempt is), running, or ended otherwise: nothing to say
	}
	log.Warn("reconcile: failed a job whose routers kept stopping before sending it; it is not run again",
		"limit", store.RouterDeathLimit, "reason", *j.Error)
}

// recordedFailure is the failure a lookup found the provider's record of an
// attempt to be, classified as the live attempt's failure would be: the
// taxonomy's fault and action where the adapter left them empty. The record
// is the outcome, so it is not unknown.
func recordedFailure(pe *providers.Error, provider string) *providers.Error {
	c := *pe
	d := providers.NewError(cmp.Or(c.Provider, provider), c.Kind, "")
	c.Provider, c.Fault, c.Action = d.Provider, cmp.Or(c.Fault, d.Fault), cmp.Or(c.Action, d.Action)
	c.OutcomeUnknown = false
	return &c
}

// storedAttempt is what reconciliation judges an unknown attempt's record
// with, as its race would have: the job's spec (a prompt's contract, or a
// chat request's response_format, and the prompt it sent), the attempt, and
// its target.
type storedAttempt struct {
	sp *spec
	a  *store.Attempt
	t  *Target
}

// errNoSpec is storedAttempt's error for a job read whose request cannot be
// built again by this deployment (its route, prompt or target no longer
// configured), as against a failure to read it.
var errNoSpec = errors.New("the job's request cannot be rebuilt")

// storedAttempt reads u's job and builds its spec.
func (r *Runner) storedAttempt(ctx context.Context, u store.UnknownAttempt) (*storedAttempt, error) {
	job, err := r.cfg.Store.GetJobAny(ctx, u.JobID)
	if err != nil {
		return nil, err
	}
	route, ok := r.cfg.Routes[job.Route]
	if !ok {
		return nil, fmt.Errorf("%w: route %s is not configured", errNoSpec, job.Route)
	}
	sp, err := r.specFor(job, route)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoSpec, err)
	}
	t, ok := r.cfg.Targets[u.Provider]
	if !ok {
		return nil, fmt.Errorf("%w: target %s is not configured", errNoSpec, u.Provider)
	}
	st := &storedAttempt{sp: sp, t: t, a: &store.Attempt{ID: u.AttemptID, Provider: u.Provider, Seq: u.Seq}}
	for i := range job.Attempts {
		if job.Attempts[i].Seq == u.Seq {
			st.a = &job.Attempts[i]
		}
	}
	return st, nil
}

// reconciledBilled is the usage to record of a failure that reconciliation
// found in the provider's record, as the live attempt would have recorded
// it: billedUsage's when the record has usage (pe.Usage); the router's
// estimate when it has none (estimatedUsage: a completion the provider
// filtered or left without choices was received, so its prompt and the part
// of the answer in the record were billed) — without it ResolveAttempt
// drops the live run's estimate, as for a failure the provider has no
// record of. ok is false when there is no usage to record (the failure is
// not one the live attempt would have estimated, or the tokenizer cannot
// count).
//
// When the job's spec cannot be built (its prompt or route no longer
// loaded) the counts cannot be bounded or estimated: the provider's usage is
// kept with its total's gap filled (totalGapFilled, which prices no gap over
// maxPlausibleTokens), rather than leaving the attempt unknown for ever, and
// a record without usage records none. err is the store's failure to read
// the job, which a later pass retries.
func (r *Runner) reconciledBilled(ctx context.Context, u store.UnknownAttempt, pe *providers.Error) (usage providers.Usage, ok bool, err error) {
	st, err := r.storedAttempt(ctx, u)
	switch {
	case err == nil && pe.Usage != nil:
		return billedUsage(st.t, st.sp, st.a, pe), true, nil
	case err == nil:
		usage, ok = estimatedUsage(st.t, st.sp, st.a, store.AttemptFailed, pe)
		return usage, ok, nil
	case !errors.Is(err, errNoSpec):
		return providers.Usage{}, false, err
	case pe.Usage != nil:
		billed, _ := totalGapFilled(*pe.Usage)
		return billed, true, nil
	}
	return providers.Usage{}, false, nil
}
