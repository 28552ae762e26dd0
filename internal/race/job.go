package race

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// runJob orchestrates a job while holding its lease: it derives what has been
// tried from the database, then starts, hedges, retries and fails over attempts
// until one wins or nothing is left to try.
//
// fresh, when not nil, is the job as this process just created it, already
// holding its lease (renewed by this runner's lease keeper): it is neither
// taken nor read again; plan, when not nil, is its prepared race.
//
// finished reports that the job was won or settled here (and announced);
// otherwise another replica may finish it (see Runner.submit).
func (r *Runner) runJob(ctx context.Context, jobID string, fresh *store.Job, plan *Plan) (finished bool) {
	log := lazyWith(r.cfg.Log, "job_id", jobID)
	if fresh == nil {
		ok, err := r.cfg.Store.AcquireJobLease(ctx, jobID, r.cfg.LeaseOwner, r.cfg.Lease)
		switch {
		case err != nil && store.Busy(err):
			// Another transaction holds the job's row (an operator's open
			// transaction, a replica cut off in the middle of one): not
			// now. The job is left as it is — running or pending with no
			// live lease and nothing in flight, an orphan that recovery
			// adopts once the row is free, or one whose live lease its
			// holder keeps.
			log.Warn("the job's row is held by another transaction; leaving the job to recovery", "err", err)
			return false
		case err != nil:
			if ctx.Err() == nil {
				log.Error("could not take the job's lease", "err", err)
			}
			return false
		case !ok:
			return false
		}
	}
	var o *orchestrator
	var breakerWait time.Duration // the job waits this long for a circuit breaker (runLater)
	defer func() {
		if o != nil && (o.done || o.settled) {
			finished = true
			return // the win or the settlement released the lease in its own commit
		}
		rctx, cancel := r.exitContext(ctx)
		defer cancel()
		release := r.cfg.Store.ReleaseJobLease
		if breakerWait > 0 {
			// Not an orphan until the wait is over: recovery would adopt it
			// again at once, ahead of other orphans (ReleaseJobLeaseFor).
			release = func(ctx context.Context, jobID, owner string) error {
				return r.cfg.Store.ReleaseJobLeaseFor(ctx, jobID, owner, breakerWait)
			}
		}
		if err := release(rctx, jobID, r.cfg.LeaseOwner); err != nil {
			log.Warn("could not release the job's lease; it is left to expire", "err", err)
		}
	}()

	// readAt is the local time the job's deadline counts from (setDeadline):
	// taken just before the job is read, since its RunElapsed is the
	// database's at some instant of the read, never before this one (the
	// deadline is never later than the database's); for a job created here,
	// as it comes to be run — its run began a moment ago.
	readAt := time.Now()
	job := fresh
	if job == nil {
		var err error
		if job, err = r.cfg.Store.GetJobToRun(ctx, jobID); err != nil {
			log.Error("could not read job", "err", err)
			return
		}
	}
	if job.State != store.JobPending && job.State != store.JobRunning {
		return
	}
	log = log.With("owner", job.Owner, "operation", job.Operation)
	// The span context this run's span continues (a request's, from
	// SubmitNewContext): a run again after a breaker wait continues it too.
	parent := trace.SpanContextFromContext(ctx)
	// The job's span starts as soon as the job is read, before anything may
	// end its run: a job that ends before any attempt (this replica cannot
	// run it, no target admits it, its route is gone) has a span too, with
	// its router.job.id, its state and why (noteJobReason).
	ctx, endSpan := r.startJobSpan(ctx, job)
	defer endSpan()
	if plan != nil && plan.o != nil {
		o = plan.o
		o.job, o.log, o.spec.jobID = job, log, job.ID
		o.setDeadline(readAt)
		if len(job.Attempts) == 1 && plan.first != nil {
			o.first, o.firstRelease = &job.Attempts[0], plan.release
			plan.release = nil
		}
		plan.Discard()
	} else {
		if why := r.cannotRun(job); why != "" {
			// Failing it is the recovery leader's, once it has waited
			// HandoverWait for a replica that can run it (failStranded).
			log.Warn("leaving the job to a replica that can run it", "reason", why)
			noteJobReason(ctx, why)
			return // the deferred release gives the lease back for such a replica's recovery pass
		}
		var reason string
		var again time.Duration
		if o, reason, again = r.prepare(ctx, job, readAt, log); o == nil {
			noteJobReason(ctx, reason)
			if again > 0 {
				// Only circuit breakers refuse it, for now (a half-open one
				// whose probe is in flight, an open one about to probe): not
				// a reason to fail it. It is run again when one may admit
				// it; meanwhile its lease has no owner (any replica may take
				// it), and ends only then: recovery does not adopt it sooner.
				log.Info("no target admits the job now (circuit breakers); running it again when one may", "in", again, "reason", reason)
				r.runLater(job.ID, again, parent)
				breakerWait = again
				return // the deferred release gives the lease back, ending after the wait
			}
			sctx, cancel := r.exitContext(ctx)
			state, settled, err := r.cfg.Store.SettleJobAs(sctx, job.ID, r.cfg.LeaseOwner, reason)
			cancel()
			switch {
			case errors.Is(err, store.ErrLeaseLost):
				log.Warn("this router no longer holds the job's lease (released, or taken by another router: see err); leaving it unsettled", "err", err)
				return
			case err != nil:
				log.Error("could not record job failure", "err", err)
			case settled:
				r.cfg.Observer.JobSettled(state) // this run ended it: counted as an orchestrator's end is
			}
			r.cfg.Listener.Publish(job.ID, state)
			log.Warn("job failed: no attempt could start", "reason", reason)
			return
		}
	}
	if r.cfg.Listener != nil {
		changed, unsubscribe := r.cfg.Listener.Subscribe(job.ID)
		defer unsubscribe()
		go r.watchCancel(ctx, job.ID, changed, !o.route.KeepLosers)
	}
	o.run(ctx)
	if o.breakerWait > 0 {
		// Only circuit breakers refused the targets left to try, as
		// prepare's wait above: the job is run again when one may admit it.
		r.runLater(job.ID, o.breakerWait, parent)
		breakerWait = o.breakerWait
	}
	return // finished is set by the deferred lease release
}

// newOrchestrator makes the race of a job on route: its routing decisions and
// candidates, in route order — the eligible targets, and those refused only
// by their circuit breaker (deferred: asked again later in the race) or by
// the conformance gate only because it could not read their results
// (unreadAtPlan: asked again when a failover or hedge reaches them). Every
// path that starts or restarts a race comes through it — the first plan
// (Plan), and a job adopted, resumed or retried (prepare) — so eligibility
// is derived one way: decide's checks of the rendered prompt, then what the
// round's context-length rejections decided (skipTooLong; none when the job
// has no attempt yet).
func (r *Runner) newOrchestrator(job *store.Job, route *Route, sp *spec, log *slog.Logger) *orchestrator {
	decisions, byBreaker := r.decideRefusals(route, sp, triedInRound(job))
	o := &orchestrator{
		r: r, job: job, spec: sp, route: route, log: log, decisions: decisions, byBreaker: byBreaker,
		results: make(chan attemptResult), retries: map[string]int{}, used: map[string]bool{},
		breakerRefused: map[string]string{}, breakerNoted: map[string]bool{},
		inflight: map[string]context.CancelCauseFunc{}, reasons: map[string]string{},
	}
	for _, d := range decisions {
		if d.Eligible {
			o.candidates = append(o.candidates, d.Provider)
		} else if _, deferred := byBreaker[d.Provider]; deferred {
			// Refused only by its breaker, which clears by itself: a later
			// failover, hedge or retry asks it again (deferred.go).
			o.candidates = append(o.candidates, d.Provider)
		} else if gateUnread(d) {
			// Refused by the conformance gate only because it could not
			// read its results, which clears by itself too: a later
			// failover or hedge asks the gate again (nextExcept), and its
			// admission puts the decision back to eligible (gateDecision).
			o.candidates = append(o.candidates, d.Provider)
			if o.unreadAtPlan == nil {
				o.unreadAtPlan, o.gateSkipped = map[string]bool{}, map[string]Decision{}
			}
			o.unreadAtPlan[d.Provider] = true
			admitted := d
			admitted.Eligible, admitted.Reason, admitted.Cause = true, "", ""
			o.gateSkipped[d.Provider] = admitted
		}
	}
	o.skipTooLong(job)
	o.routing = appendDecisions(nil, o.decisions)
	return o
}

// inRound says whether a is an attempt of the job's current round (since the
// caller's last retry) that was sent: what a resumed race counts as tried.
func inRound(job *store.Job, a store.Attempt) bool {
	return a.Seq > job.AttemptBase && !store.NotSent(a)
}

// triedInRound is the targets the job tried in its current round, as prepare
// marks them used: an attempt sent in the round, neither cut unworked nor
// cut while its provider was answering (those did not try their target).
// The conformance gate admitted each when its attempt started; the race
// sends it no more than a retry, which the gate is not asked about again
// (decideRefusals). Nil for a job with no attempt (a plan).
func triedInRound(job *store.Job) map[string]bool {
	var tried map[string]bool
	for _, a := range job.Attempts {
		if inRound(job, a) && !cutAnswering(a) && !unworked(a) {
			if tried == nil {
				tried = map[string]bool{}
			}
			tried[a.Provider] = true
		}
	}
	return tried
}

// prepare loads what the orchestrator needs; a nil orchestrator comes with the
// reason the job cannot run — and, when only circuit breakers refuse the
// targets not yet tried in its round and one may admit it before the route's
// deadline, with again: how long until one may (breakerWait, bounded by what
// is left of the deadline). The job is then run again, not failed. readAt is
// when the job was read (setDeadline): its deadline counts from then, so the
// time routing takes here (the conformance gate's reads) is the job's.
func (r *Runner) prepare(ctx context.Context, job *store.Job, readAt time.Time, log *slog.Logger) (o *orchestrator, reason string, again time.Duration) {
	route, ok := r.cfg.Routes[job.Route]
	if !ok {
		return nil, "route " + job.Route + " is no longer configured", 0
	}
	sp, err := r.specFor(job, route)
	if err != nil {
		return nil, err.Error(), 0
	}
	o = r.newOrchestrator(job, route, sp, log)
	o.setDeadline(readAt)
	// Resume: providers already tried in this round (since the caller's last
	// retry) are not tried again, except by a retry that was due when the job
	// was handed over (resumeRetry); retries made this round count against
	// max_retries. An attempt its provider provably never worked on, cut
	// short by its router's death or stop (unworked), did not try its
	// target: the target may take the request again. Nor did one whose
	// provider was answering when its router was stopped (cutAnswering):
	// its target did nothing wrong, and the request is sent again — it
	// still counts against max_attempts, in the database, which bounds a
	// job whose replicas keep being stopped. Marked before the
	// targets' eligibility is weighed: a breaker that refuses a target
	// already tried (opened, most likely, by that very attempt's failure)
	// is no reason to wait.
	latest := map[string]store.Attempt{}
	for _, a := range job.Attempts {
		if inRound(job, a) && cutAnswering(a) {
			// Why it ended, should the race end before the request is sent
			// again (max_attempts, no target left to admit it): a live
			// attempt's end replaces it.
			o.reasons[a.Provider] = cmp.Or(o.reasons[a.Provider], a.Provider+": "+failureOf(a))
			continue
		}
		if inRound(job, a) && !unworked(a) {
			o.used[a.Provider] = true
			o.attempts++
			if a.Role == store.RoleRetry {
				o.retries[a.Provider]++
			}
			if l, ok := latest[a.Provider]; !ok || a.Seq > l.Seq {
				latest[a.Provider] = a
			}
			o.recordedFailure(a) // its reason; a refusal of the caller's request, as refuse takes it
		}
	}
	// The plan's decisions say why no target is eligible now; the routing
	// recorded keeps what the round's attempts ran under (keepRan).
	planned := o.decisions
	o.keepRan(job, latest)
	if !o.anyEligible() {
		var why []string
		for _, d := range planned {
			why = append(why, d.Provider+": "+d.Reason)
		}
		if err := r.cfg.Store.SetRouting(ctx, job.ID, r.cfg.LeaseOwner, o.routing); err != nil {
			log.Error("could not record routing", "err", err)
		}
		reason = "no eligible provider on route " + job.Route + " (" + strings.Join(why, "; ") + ")"
		if len(o.reasons) > 0 { // what the round's attempts ran into comes first
			reason = o.failReason() + "; " + reason
		}
		again, notWaited := o.breakerAgain(r.breakerWait(o.decisions, o.byBreaker, o.used))
		if notWaited != "" {
			// First, as the race under way says it (waitForBreakers' stop):
			// a deadline that passed during the wait fails the job by its
			// deadline (FailedByDeadline) whichever run saw it pass.
			reason = notWaited + "; " + reason
		}
		return nil, reason, again
	}
	// Nothing else works on the request yet: a refusal stops the race, but
	// a retry resumed first goes on.
	o.actOnRecorded(latest)
	return o, "", 0
}

// resumeRetry schedules, as the orchestration that recorded them would have,
// the retry of each provider whose latest attempt of the round failed
// transiently with retries left (the race keeps one pending retry per
// target, scheduleRetry): a job handed over during a retry's backoff (a
// drain, SPEC §17) is retried, not failed. The wait is the
// backoff with the stored Retry-After counted from now (never sooner than the
// provider asked); a retry that could not start before the job's deadline (as
// setDeadline counts it, from the job's read), or
// whose Retry-After is beyond max_retry_after, is not scheduled, and the race
// fails over (retryWait). The provider stays used: the retry starts from the
// timer.
func (o *orchestrator) resumeRetry(latest map[string]store.Attempt) {
	for _, p := range o.candidates {
		a, ok := latest[p]
		if !ok || a.State != store.AttemptFailed || o.retries[p] >= o.r.targetRetries(p) || o.retryPendingFor(p) {
			continue // one pending retry per target (scheduleRetry)
		}
		if o.deferred(p) {
			// Its breaker refused it at the plan (opened, most likely, by
			// that very failure): the race fails over rather than wait out a
			// backoff only to be refused.
			continue
		}
		retryAfter, ok := retryOf(a)
		if !ok {
			continue
		}
		delay, wait, why := o.retryWait(p, o.retries[p]+1, retryAfter)
		if !wait {
			if why != "" { // it cannot start before the job's deadline: the race fails over
				o.reasons[p] = cmp.Or(o.reasons[p], p+": "+a.State) + "; " + why
			}
			continue
		}
		o.retries[p]++
		o.log.Info("resuming a retry on the same provider", "provider", p, "delay", delay)
		o.scheduleRetry(p, delay)
	}
}

// retryOf reads a failed attempt's stored error: ok when the provider's
// failure allowed a retry on it, with the Retry-After it asked for.
func retryOf(a store.Attempt) (retryAfter time.Duration, ok bool) {
	var e struct {
		Action       providers.Action `json:"action"`
		RetryAfterMS int64            `json:"retry_after_ms"`
	}
	if len(a.Error) == 0 || json.Unmarshal(a.Error, &e) != nil || e.Action != providers.ActionRetry {
		return 0, false
	}
	return time.Duration(max(e.RetryAfterMS, 0)) * time.Millisecond, true
}

// watchCancel cancels this process's work on a job when the database says the
// job was cancelled (by any replica), or, unless the route keeps losers
// running, completed.
func (r *Runner) watchCancel(ctx context.Context, jobID string, changed <-chan string, cancelLosers bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case state := <-changed:
			var err error
			if state = store.FinalState(state); state == "" {
				state, err = r.cfg.Store.JobStateAny(ctx, jobID)
			}
			switch {
			case err != nil:
				if ctx.Err() == nil {
					r.cfg.Log.Warn("could not read job state", "job_id", jobID, "err", err)
				}
			case state == store.JobCancelled:
				r.cancelWith(jobID, errJobCancelled)
				return
			case state == store.JobSucceeded && cancelLosers:
				// Completed elsewhere (a resolution, another replica): in-flight
				// attempts can no longer win (SPEC §6.6).
				r.cancelWith(jobID, errLoser)
				return
			}
		}
	}
}

// cutAnswering reports whether a is an attempt whose provider had begun
// answering when its router was stopped (shutdown.drain ran out, or a second
// signal): recorded `failed`, kind shutdown, retryable (runAttempt). The
// router cut it, not its target: the race that adopts the job sends the
// request again, and the attempt neither uses its target up nor counts
// against max_retries (SPEC §17: another replica goes on with the race).
// It still counts against max_attempts (store.CreateAttempt: its provider
// worked on it, and billed it), which bounds a job whose replicas keep
// being stopped. An attempt cut before any byte (unknown, then resolved) is
// not one: unworked, or a failure its provider's record shows.
func cutAnswering(a store.Attempt) bool {
	if a.State != store.AttemptFailed || kindOf(a) != KindShutdown {
		return false
	}
	_, retry := retryOf(a)
	return retry
}

// kindOf is the taxonomy kind of an earlier attempt's stored error ("" when
// it has none).
func kindOf(a store.Attempt) providers.Kind {
	kind, _ := classOf(a)
	return kind
}

// classOf is the taxonomy kind and the action of an earlier attempt's stored
// error (both "" when it has none).
func classOf(a store.Attempt) (providers.Kind, providers.Action) {
	if a.State != store.AttemptFailed || len(a.Error) == 0 {
		return "", ""
	}
	var e struct {
		Kind   providers.Kind   `json:"kind"`
		Action providers.Action `json:"action"`
	}
	if json.Unmarshal(a.Error, &e) != nil {
		return "", ""
	}
	return e.Kind, e.Action
}

// failureOf is why an earlier attempt did not win, from its stored error, so a
// resumed race can still explain a failure in full. It is worded as a live
// attempt's reason (describe): the stored message is the provider error's
// own text, which begins "provider <name>: ", and the reason is prefixed
// with the provider's name already (prepare), so that prefix is dropped —
// "primary: timeout: …", not "primary: provider primary: timeout: …".
func failureOf(a store.Attempt) string {
	if a.State != store.AttemptFailed && a.State != store.AttemptInvalid || len(a.Error) == 0 {
		return ""
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(a.Error, &e) != nil {
		return ""
	}
	return strings.TrimPrefix(e.Message, "provider "+a.Provider+": ")
}
