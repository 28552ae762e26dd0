package race

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/routerhq/router/internal/gostack"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// Causes of an attempt's cancellation, which decide what it is recorded as.
var (
	errLoser    = errors.New("another attempt won")
	errDeadline = errors.New("the job's deadline passed")
)

// orchestrator runs one job's race in one goroutine; attempts run in their own
// goroutines and report on results. It holds no guarantee: every attempt is
// created, bounded and completed by the store.
type orchestrator struct {
	r     *Runner
	job   *store.Job
	spec  *spec
	route *Route
	// routing is the routing decisions, recorded with the first attempt.
	routing []byte
	// decisions are the routing decisions, for adding a later event to them.
	decisions []Decision
	// byBreaker names the targets ineligible only because their circuit
	// breaker refused them when the decisions were made (decideRefusals),
	// each with the breaker that refused it (breakerOf).
	byBreaker map[string]string
	log       *slog.Logger
	// first, when set, is the attempt created with the job (see Plan), and
	// firstRelease its breaker admission.
	first        *store.Attempt
	firstRelease func(Outcome)
	// sole is true while the first attempt above is the job's only one (see
	// runAttempt); cleared before any other attempt is created.
	sole atomic.Bool

	candidates []string        // eligible providers, route order
	used       map[string]bool // providers that had an attempt this round
	retries    map[string]int
	attempts   int
	inflight   map[string]context.CancelCauseFunc // attempt id -> cancel
	results    chan attemptResult
	reasons    map[string]string // provider -> why it failed (for the job's error)

	// made is how many of the round's attempts count against max_attempts,
	// as the store counted them at the latest creation of this run
	// (attemptsCounted); madeKnown says it is still exact (attempt_limit.go).
	made      int
	madeKnown bool

	// breakerRefused names the candidates not yet used whose circuit
	// breaker refused the latest attempt chosen for them (choose), each with
	// that breaker (breakerOf). Not used: a breaker's refusal passes (a
	// half-open breaker's probe ends, an open one half-opens), so a later
	// hedge, failover or retry asks it again; a race left with nothing in
	// flight and only such targets to try waits for them (waitForBreakers).
	breakerRefused map[string]string
	// breakerNoted names the targets whose breaker refusal is in routing
	// (noteBreakerRefusal): recorded once per target per job run.
	breakerNoted map[string]bool
	// gateSkipped holds, for each target whose decision gateAllows made
	// ineligible (a conformance gate refusal found after the plan), the
	// decision as the plan made it, put back should the gate allow it again.
	gateSkipped map[string]Decision
	// unreadAtPlan names the candidates the gate refused at the plan only
	// because it could not read their results (GateUnread): not eligible
	// for the plan, nor for its first choice, but asked again when a
	// failover or hedge reaches them (newOrchestrator).
	unreadAtPlan map[string]bool
	// breakerWait, set by finish, is how long the job waits for a circuit
	// breaker before it is run again (runJob's runLater), instead of
	// being settled.
	breakerWait time.Duration

	leaseLost bool // another process took the job over: touch nothing more
	settled   bool // finish moved the job out of pending/running (its lease went with it)
	done      bool // a result won, or the job was completed elsewhere
	blocked   bool // an attempt is unknown: no new attempt may start
	stopped   bool // no new attempt: a caller fault, a limit, a lost lease
	stopWhy   string
	// unknowns are the attempts this run saw end unknown and has not yet
	// found resolved (takeResolutions).
	unknowns []string

	// The job's retries waiting (retry_queue.go), at most one per target:
	// pending ones wait out their backoff, soonest first, on retryTimer;
	// ready ones came due while they could not start — max_inflight reached,
	// or the hedge budget denied the call beside the others (holdExtra) — and
	// start as attempts end or a budget slot is freed.
	pending    []pendingRetry
	retryTimer *time.Timer
	ready      []string

	// refused is a caller-fault refusal's reason (refuse): no target not
	// yet tried is started any more, but the targets already working on the
	// request go on, their retries included.
	refused string

	// extras are the route's hedge budget slots the job holds, one per call
	// in flight beyond its first (hedging.go, holdExtra): each taken by a
	// hedge, or by a retry or failover started beside an attempt in flight,
	// and given back as calls end (settleExtra). Each is its release.
	extras      []func()
	hedgeDenied bool // a denial was recorded in routing
	drainSeen   bool // the runner's drain was acted on
	// failoverNoRoomNoted: a failover refused for want of room before the
	// job's deadline was recorded in routing (failoverFits).
	failoverNoRoomNoted bool
	// retryNoRoomNoted: likewise for a retry that came due while it could
	// not start (readyRetryFits).
	retryNoRoomNoted bool
	// budgetWake is signalled by the route's hedge budget when a slot may
	// have been freed for a call it denied this job (acquireExtra):
	// budgetWaiting says it is among the budget's waiters or holds its
	// signal; budgetAsks counts the slots asked for, to tell whether a wake
	// was acted on (budgetFreed).
	budgetWake    chan struct{}
	budgetWaiting bool
	budgetAsks    int
	// leftOver: the drain left work of this race for another replica — a
	// retry it dropped, an attempt it did not send (handOver).
	leftOver bool
	// heldRow: the last attempt the race tried to start was not created
	// because another transaction held the job's row past the store's lock
	// wait (store.ErrBusy); cleared by the next try, whatever its end (a
	// breaker's refusal, an attempt started), and when nothing is left to
	// try. With nothing in flight, the job is then left to its lease
	// (leftToLease), not settled.
	heldRow bool
	// startFailedErr: likewise, the last attempt the race tried to start
	// could not be, by a database error that is no refusal of the store's
	// (startFailed), on its creation or its running mark; startingAgain:
	// startFailed is trying it once more at once.
	startFailedErr error
	startingAgain  bool
	// fenced counts the attempts of this run the send fence kept from being
	// sent (unsentPastLease); fenceGaveUp, set at maxFencedPerRun of them,
	// says this run starts no more attempts, and a race left with nothing in
	// flight is left to its lease (leftToLease), not settled.
	fenced      int
	fenceGaveUp bool
	// deadlineAt is when the job's deadline passes (zero: none), on this
	// process's clock.
	deadlineAt time.Time

	// flights are the attempts in flight as the hedge clock sees them
	// (hedging.go): when each started, and whether its first byte came.
	flights map[string]*flight
}

// attemptResult is how an attempt ended.
type attemptResult struct {
	attempt *store.Attempt
	state   string // won, lost, failed, invalid, unknown, cancelled, abandoned
	err     *providers.Error
	reason  string
	usage   providers.Usage
	// latency is the provider call's, from send to its answer or error: the
	// attempt's stored latency_ms, without the router's own judging and
	// recording after it (0: never sent, or its end not recorded).
	latency time.Duration
	// broken is, for an invalid output, the first rule it broke and where
	// ("enum at /category"): what the attempt's span says, without the
	// output's values that reason quotes (tenant data).
	broken string
	// callers says an invalid output broke only the caller's own contract
	// (spec.callers): not a failure of the target.
	callers bool
	// cutByDeadline says the job's deadline ended the attempt before its
	// target had its chance (excusedByDeadline): not a failure of the target.
	cutByDeadline bool
	// discarded says the provider gave a valid answer after the attempt had
	// been settled otherwise: its job cancelled (state cancelled), the
	// attempt resolved meanwhile (state is the resolution's, kept: won for
	// a `succeeded` one), or the attempt recorded lost while nothing won the
	// job (notWon). state is as recorded; no race was lost.
	discarded bool
	// silentLoser says the attempt was cut as a loser (another attempt won)
	// after a hedge had been started for it because it had no response byte
	// for the hedge delay, and it still had none: its target is counted as
	// failed (silentPastHedge), or a target that never answers would hide
	// behind its hedges.
	silentLoser bool
	// callState is, for an attempt whose call ended unknown after its job
	// had ended, that call's state (unknown): state is what the store
	// recorded instead (lost, cancelled: store.FinishAttemptAs). Its breaker
	// hears the call (breakerOutcome); it lost no race, having no answer.
	callState string
	// pastLease says the attempt was not sent because its lease may have run
	// out (state attemptUnsent: leaseRanOutUnsent), and resumed that its
	// record made the job, unknown only because of it, run again
	// (unsentPastLease).
	pastLease, resumed bool
	// held is, for an attempt kept from being sent (pastLease), how long its
	// lease had been held when it was refused (leaseRanOut).
	held time.Duration
}

func (o *orchestrator) run(ctx context.Context) {
	defer o.r.hedges.jobStarted(o.job.Route)()
	defer o.releaseExtra()
	defer o.forgetBudgetWake() // before the slots go back: their wakes go to other jobs
	// The deadline is the whole run's, on the database clock: a job adopted
	// or resumed here has only what is left of it (RunElapsed, read with the
	// job), and none when it has passed — counted from when the job was read
	// (setDeadline, by runJob), not from now: preparing the race took some of
	// it. A fresh job's run has just begun.
	if o.deadlineAt.IsZero() {
		o.setDeadline(time.Now())
	}
	var deadline <-chan time.Time
	if !o.deadlineAt.IsZero() {
		if left := time.Until(o.deadlineAt); left > 0 {
			t := time.NewTimer(left)
			defer t.Stop()
			deadline = t.C
		} else {
			o.deadlinePassed()
		}
	}
	hedge := time.NewTimer(time.Hour)
	hedge.Stop()
	defer hedge.Stop()
	switch {
	case o.first != nil:
		// Created with the job, in the same commit: send it at once — within
		// the lease that commit set (withLeaseSet: the claim's send).
		a, release := o.first, o.firstRelease
		o.first, o.firstRelease, o.routing = nil, nil, nil
		o.used[a.Provider] = true
		o.attempts++
		o.attemptsCounted(1) // the job's only attempt: created with it (runJob)
		o.sole.Store(true)
		o.launch(withLeaseSet(ctx, o.job.LeaseSentAt), a, a.Role, release, false)
	case len(o.pending) > 0:
		// A retry that was due when the job was handed over goes first, when
		// its backoff ends (prepare), as it would have in the orchestration
		// that scheduled it.
	case o.stopped:
		// Adopted after its deadline: nothing starts; finish settles it.
	default:
		if p := o.next(); p != "" {
			role := o.r.roleOf(o.route, p)
			if o.attempts > 0 {
				role = store.RoleFailover
			}
			o.start(ctx, p, role)
		}
	}
	o.armHedge(ctx, hedge)

	for {
		// Blocked with nothing in flight, a pending retry is not waited for:
		// the store would refuse it while the attempt is unknown, so the
		// blocked settle asks now and the retry runs if it was resolved.
		for len(o.inflight) > 0 || len(o.pending) > 0 && !o.blocked {
			o.step(ctx, hedge, &deadline)
		}
		// Nothing is in flight. The blocking rule is the database's: if the
		// unknown attempt that stopped new attempts was resolved meanwhile (by
		// an operator or reconciliation), finish learns it from the settle
		// itself and the race goes on — or, when the runner drains, the job is
		// handed over (the next finish) instead of settled with a block that
		// no longer holds.
		if !o.finish(ctx) {
			o.cancelRetry() // settled blocked (or not ours): none of them may start
			return
		}
		o.takeResolutions(ctx) // unblocked: acts on what the resolutions say
		if !o.retryPending() { // else the race goes on with the retry it had pending
			o.failover(ctx) // none while draining
		}
		o.startReady(ctx) // a retry the store refused while blocked (keepRetry)
		// The hedge timer was left stopped when the last attempt ended: the
		// failover goes on the hedge clock as any attempt does, or a silent
		// one would run to its own deadline, unknown, instead of being hedged.
		o.armHedge(ctx, hedge)
	}
}

// step waits for one event of the race and acts on it.
func (o *orchestrator) step(ctx context.Context, hedge *time.Timer, deadline *<-chan time.Time) {
	select {
	case res := <-o.results:
		delete(o.inflight, res.attempt.ID)
		o.handle(ctx, res)
		o.startReady(ctx)
		o.settleExtra()
		o.armHedge(ctx, hedge)
	case <-hedge.C:
		o.hedgeDue(ctx, hedge)
	case <-o.retryC():
		o.retriesDue(ctx)
		o.settleExtra()
		o.armHedge(ctx, hedge)
	case <-o.budgetWakeC():
		o.budgetFreed(ctx, hedge)
	case <-*deadline:
		*deadline = nil
		o.deadlinePassed()
	case <-o.r.drainSignal(o.drainSeen):
		// Shutting down: no retry or failover; a pending retry is handed
		// over. A hedge that fits the drain may still start (drainFits).
		o.drainSeen = true
		if o.retryPending() {
			o.leftOver = true
		}
		o.cancelRetry()
		o.armHedge(ctx, hedge)
	case <-ctx.Done():
		o.cancelRetry()
		// Job cancelled, completed (possibly by one of these very attempts, whose
		// win was announced before its result reached this loop) or process
		// stopping: the attempts see ctx too; wait for them.
		for len(o.inflight) > 0 {
			res := <-o.results
			delete(o.inflight, res.attempt.ID)
			// A hedge budget slot goes back as its call ends, not when the
			// last does: a loser slow to stop keeps no other job's hedge
			// waiting (budgetFreed).
			o.settleExtra()
			if res.state == store.AttemptWon && !res.discarded { // discarded: a resolution's win, not this run's
				o.r.cfg.Observer.JobSettled(store.JobSucceeded)
			}
			if res.state == store.AttemptWon || res.state == store.AttemptLost {
				o.done = true
			}
		}
	}
}

// finish settles the job once nothing more will start. It reports true when
// the race should go on instead: it was blocked by an unknown attempt that has
// been resolved since (store.ErrUnblocked).
func (o *orchestrator) finish(ctx context.Context) (goOn bool) {
	if o.done || o.leaseLost || errors.Is(context.Cause(ctx), errShutdown) || errors.Is(context.Cause(ctx), errLoser) {
		return false // nothing to settle: won here or elsewhere, or not ours to settle
	}
	if o.handOver() {
		return false // the deferred lease release lets another replica go on at once
	}
	if o.leftToLease() {
		return false // the deferred lease release (or, the row still held, its expiry) lets recovery go on
	}
	if o.waitForBreakers(ctx) {
		return false // runJob runs it again after o.breakerWait, its lease released until then
	}
	// Bounded (exitContext): a job row another transaction holds for long
	// leaves the job to its lease rather than holding this run.
	wctx, cancel := o.r.exitContext(ctx)
	defer cancel()
	if o.routing != nil { // not recorded by an attempt's creation: record why
		if err := o.r.cfg.Store.SetRouting(wctx, o.job.ID, o.r.cfg.LeaseOwner, o.routing); err != nil {
			o.log.Error("could not record routing", "err", err)
		}
	}
	settle := o.r.cfg.Store.SettleJobAs
	if o.blocked && !o.stopped && ctx.Err() == nil {
		settle = o.r.cfg.Store.SettleBlockedJobAs
	}
	state, settled, err := settle(wctx, o.job.ID, o.r.cfg.LeaseOwner, o.failReason())
	if errors.Is(err, store.ErrUnblocked) {
		o.log.Info("the unknown attempt was resolved before the job settled; the race goes on")
		return true
	}
	if errors.Is(err, store.ErrLeaseLost) {
		// This process stalled past its lease and another replica adopted
		// the job: it settles it, not this one.
		o.leaseLost = true
		o.log.Warn("this router no longer holds the job's lease (released, or taken by another router: see err); leaving it unsettled", "err", err)
		return false
	}
	if err != nil {
		o.log.Error("could not settle job", "err", err)
		return false
	}
	// A job still pending or running was not settled: an attempt is still
	// in flight in the database (its end, or its win, could not be
	// recorded), and recovery settles the job once that attempt's lease
	// expires. Nothing changed here to announce or to count.
	o.settled = settledState(state)
	if o.settled {
		o.r.cfg.Listener.Publish(o.job.ID, state)
	}
	if settled {
		// Counted only when this call ended the job: one that was ended
		// otherwise while this process stalled (recovery's leader settled
		// it unknown once its attempt's lease expired, and counted it) is
		// answered with its state, and is not counted twice.
		o.r.cfg.Observer.JobSettled(state)
	}
	return false
}

// leftToLease: the race would go on, but the attempt it tried to start last
// was not created because another transaction holds the job's row (heldRow),
// or could not be started for a database error (startFailedErr: its creation
// or its running mark failed, twice), and nothing is in flight — or the send
// fence kept so many of its attempts
// from being sent that this run starts no more (fenceGaveUp). Settling it
// would fail a job whose targets were not tried (or wait on the same row), so
// it is left as after any failed write: unsettled, its lease released (or
// left to expire while the row is still held), and recovery adopts it and
// runs it on.
func (o *orchestrator) leftToLease() bool {
	if o.stopped || o.blocked {
		return false
	}
	if o.fenceGaveUp {
		o.log.Warn("the send fence kept too many attempts of this run from being sent (see the warning before), so no more could start; " +
			"leaving the job to its lease (recovery adopts it once the lease is released or expires)")
		return true
	}
	if o.startFailedErr != nil {
		o.log.Warn("the database failed the start of the last attempt tried (see the warning before), and nothing is in flight; "+
			"leaving the job to its lease (recovery adopts it once the lease is released or expires)", "err", o.startFailedErr)
		return true
	}
	if !o.heldRow {
		return false
	}
	o.log.Warn("another transaction holds the job's row, so no attempt could start; leaving the job to its lease (recovery adopts it once the lease is released or expires)")
	return true
}

// settledState says whether a job in state has left pending and running:
// terminal, or unknown (awaiting a resolution).
func settledState(state string) bool {
	return state != "" && state != store.JobPending && state != store.JobRunning
}

// canStart says whether the race may start another attempt now: a retry or
// a failover (a hedge asks canHedge).
func (o *orchestrator) canStart() bool {
	return o.canHedge() && !o.r.draining.Load()
}

// canHedge is canStart for a hedge, which a drain allows when it fits the
// drain's budget (drainFits, checked on the hedge's target).
//
// An unknown attempt (blocked) does not keep a hedge, retry or failover that
// comes due from being tried: the blocking rule is the database's (SPEC §6.7,
// §6.9), and the unknown attempt may have been resolved since this run
// learnt of it — by reconciliation or an operator — while a sibling is still
// in flight. The attempt's creation asks the store, which refuses it
// (store.ErrAttemptBlocked: blocked stays set) while an attempt is still
// unknown, and clears blocked when it is created (start). That is one round
// trip per due event while blocked (a silent attempt's hedge is tried again
// a hedge delay later: hedgeAgain), and none on a race never blocked. With
// nothing in flight the blocked settle asks instead (finish, ErrUnblocked).
func (o *orchestrator) canHedge() bool {
	return !o.done && !o.stopped && !o.fenceGaveUp
}

func (o *orchestrator) stop(why string) {
	if !o.stopped {
		o.stopped, o.stopWhy = true, why
	}
}

// setDeadline fixes when the job's deadline passes, on this process's clock:
// readAt — when the job was read to be run, and its RunElapsed measured on
// the database clock; when a job created here was handed to the runner — plus
// what was left of the route's deadline then. Counted from the read, not from
// when the race begins: preparing the race (routing, whose conformance gate
// reads the database, up to 5 s a target) spends the job's time too, and an
// adopted, resumed or handed-over job would otherwise get that much more of
// it. No deadline: none.
func (o *orchestrator) setDeadline(readAt time.Time) {
	if o.route.Deadline > 0 {
		o.deadlineAt = readAt.Add(o.route.Deadline - o.job.RunElapsed)
	}
}

// pastDeadline says whether the job's deadline has passed now. The run loop
// learns it from its timer (deadlinePassed), but only when it next selects:
// an orchestration busy past the deadline — a conformance gate's read, an
// attempt's creation waiting for the job's row — would otherwise start an
// attempt the deadline no longer allows (start).
func (o *orchestrator) pastDeadline() bool {
	return !o.deadlineAt.IsZero() && !time.Now().Before(o.deadlineAt)
}

// deadlinePassed stops the race at the job's deadline: nothing new starts,
// a pending retry is dropped and the attempts in flight are cut (errDeadline).
func (o *orchestrator) deadlinePassed() {
	o.stop("the job's deadline of " + o.route.Deadline.String() + " passed")
	o.cancelRetry()
	for _, cancel := range o.inflight {
		cancel(errDeadline)
	}
}

// retryDropped notes a retry that was due but not started: when the runner
// drains, it is left for the replica that takes the job over (handOver), not
// a reason to settle the job failed.
func (o *orchestrator) retryDropped() {
	if o.r.draining.Load() {
		o.leftOver = true
	}
}

// handle decides what an ended attempt means for the race.
func (o *orchestrator) handle(ctx context.Context, res attemptResult) {
	p := res.attempt.Provider
	if res.discarded || res.state != store.AttemptFailed && res.state != store.AttemptInvalid {
		o.attemptCountUnsure() // it may no longer count against max_attempts (never sent, unknown)
	}
	if res.discarded && res.state != store.AttemptWon {
		if res.state != store.AttemptCancelled {
			// A valid answer discarded because its attempt had been settled
			// otherwise (an operator's resolution), or recorded lost while
			// nothing won the job (a job left pending or failed with the
			// attempt in flight, notWon): the job is not complete, so the
			// race goes on, on the next provider as after a failure.
			// If this process lost the job's lease meanwhile (the job went
			// unknown, which releases it), the attempt is refused and the job
			// is left to whoever resumes it (see start).
			o.reasons[p] = p + ": its answer came after the attempt was settled; discarded"
			o.failover(ctx)
		}
		return // cancelled: the job was; its settlement says so (finish)
	}
	switch res.state {
	case store.AttemptWon, store.AttemptLost:
		// Won, lost to another attempt's win, or discarded after a
		// `succeeded` resolution had won the attempt (notWon): the job is
		// complete, and the race ends. Only this run's win settled it.
		if res.state == store.AttemptWon && !res.discarded {
			o.r.cfg.Observer.JobSettled(store.JobSucceeded)
		}
		if len(o.inflight) > 0 {
			o.log.Info("race won", "provider", p, "role", res.attempt.Role, "others_in_flight", len(o.inflight))
		}
		o.done = true
		o.cancelRetry()
		if !o.route.KeepLosers {
			for _, cancel := range o.inflight {
				cancel(errLoser)
			}
		}
	case "abandoned":
		o.r.abandonLease(o.job.ID, res.attempt.ID) // left to its lease's expiry: not renewed
		o.stop("this router stopped")
	case attemptUnsent:
		if res.pastLease {
			o.unsentPastLease(ctx, res) // its lease may have run out before the send
			break
		}
		// Never sent (the router is shutting down): the job goes to another
		// replica as it stands (handOver), nothing is settled here.
		o.leftOver = true
	case store.AttemptCancelled:
	case store.AttemptUnknown:
		// Pending retries are kept: a sibling in flight may still win, and
		// the store, not this run's memory, says whether the attempt still
		// blocks the job (canHedge) — it may have been resolved before its
		// end reached here. A retry that comes due is tried, and refused
		// while the attempt is unknown; with nothing in flight the blocked
		// settle asks at once (run), and drops them only if still blocked.
		// Its reason names it in the job's error should an operator resolve
		// it failed and the race then fail (a job left unknown gets the
		// store's reason instead).
		o.blocked = true
		o.reasons[p] = res.reason
		o.unknowns = append(o.unknowns, res.attempt.ID)
	case store.AttemptInvalid:
		o.reasons[p] = res.reason
		o.failover(ctx)
	case store.AttemptFailed:
		o.reasons[p] = res.reason
		pe := res.err
		switch {
		case pe.Action == providers.ActionRetry && o.retries[p] < o.r.targetRetries(p) && pe.RetryAfter <= o.r.cfg.Backoff.MaxRetryAfter:
			delay, wait, why := o.retryWait(p, o.retries[p]+1, pe.RetryAfter)
			switch {
			case !wait:
				// The retry could not start before the job's deadline: as
				// for a Retry-After beyond max_retry_after, fail over now.
				o.reasons[p] = res.reason + "; " + why
				o.failover(ctx)
			case o.canStart() && o.attemptLimitSpent() && len(o.inflight) == 0 && !o.retryPending():
				// The store would refuse the retry (max_attempts), and nothing
				// else works on the job: it fails now, not after the backoff.
				o.stopAtAttemptLimit()
			case o.canStart() && !o.retryPendingFor(p):
				// Beside any other target's retry pending (scheduleRetry).
				o.retries[p]++
				o.log.Info("retrying on the same provider", "provider", p, "kind", pe.Kind, "delay", delay)
				o.scheduleRetry(p, delay)
			default:
				if o.r.draining.Load() {
					o.leftOver = true // the retry is the adopting replica's (resumeRetry)
				}
				o.failover(ctx) // none may start (or, never seen, p's retry is pending already)
			}
		case pe.Kind == providers.KindContextLength:
			// Only a target with a larger context window can take the request.
			if o.skipTooLongAfter(p) {
				o.recordDecisions(ctx, "the context-length skips")
			}
			if o.next() == "" {
				o.refuse(res.reason)
			} else {
				o.failover(ctx)
			}
		case pe.Action == providers.ActionStop && pe.Kind == providers.KindBadRequest,
			pe.Action == providers.ActionStop && pe.Kind == providers.KindContentPolicy && !o.route.FailoverOnContentPolicy:
			// The caller's request refused: another target working on it
			// may still answer (refuse).
			o.refuse(res.reason)
		case pe.Action == providers.ActionStop && pe.Kind != providers.KindContentPolicy:
			o.stop(res.reason)
		default:
			o.failover(ctx)
		}
	}
}

// refuse acts on a caller-fault refusal (a bad request, content policy, a
// context too long for every target left), why being its reason. Another
// target may be working on the same request — in flight, or waiting out a
// retry's backoff — having accepted what this one refused (an assistant
// prefill, a parameter, a longer prompt): it goes on, retries included, and
// may still answer. No target not yet tried is started any more (next), and
// the race stops with the refusal at once when nothing else works on the
// request. When the others end without an answer the job fails with every
// target's reason, as after any failure.
func (o *orchestrator) refuse(why string) {
	if o.refused == "" {
		o.refused = why
	}
	if len(o.inflight) == 0 && !o.retryPending() {
		o.stop(why)
	}
}

// denyHedge records, once per job run, that the hedge budget denied a hedge
// (or a retry or failover that would be a call beside the job's others): in
// the job's routing and in the observer's count (router_hedges_denied_total),
// so that the counter is the number of denials jobs' routing records. A
// denied hedge is asked for again every hedge delay while its attempt stays
// silent (hedgeAgain); those repeated denials of the same wish are neither
// recorded nor counted again, else a long silence would count once per hedge
// delay what the job's routing records once.
func (o *orchestrator) denyHedge(ctx context.Context, target, why string) {
	if o.blocked {
		// An attempt of the job went unknown (as far as this run knows): the
		// store refuses new attempts until it is resolved, so the budget is
		// not what holds the call back. Nothing is recorded or counted — an
		// operator reading hedge_denied would tune hedge_budget instead of
		// resolving the attempt — and the call is asked for again as a denied
		// one is (hedgeAgain, ready), the store deciding once a slot is had.
		o.log.Debug("hedge budget spent while an attempt of the job is unknown", "provider", target, "reason", why)
		return
	}
	if o.hedgeDenied {
		o.log.Debug("hedge denied again", "provider", target, "reason", why)
		return
	}
	o.log.Info("hedge denied", "provider", target, "reason", why)
	if obs, ok := o.r.cfg.Observer.(HedgeDenialObserver); ok {
		obs.HedgeDenied(o.job.Route)
	}
	o.hedgeDenied = true
	o.decisions = append(o.decisions, Decision{Provider: target, Event: "hedge_denied", Eligible: true, Reason: why})
	o.recordDecisions(ctx, "the hedge denial")
}

// recordDecisions records the job's routing as o.decisions now stand: with
// the next attempt when the plan's routing is not recorded yet, else at once.
// what names the change for the log.
func (o *orchestrator) recordDecisions(ctx context.Context, what string) {
	b, err := json.Marshal(o.decisions)
	if err != nil {
		return
	}
	if o.routing != nil {
		o.routing = b // not recorded yet: recorded with the next attempt
		return
	}
	wctx, cancel := o.r.exitContext(ctx)
	defer cancel()
	if err := o.r.cfg.Store.SetRouting(wctx, o.job.ID, o.r.cfg.LeaseOwner, b); err != nil {
		o.log.Warn("could not record "+what+" in routing", "err", err)
	}
}

// failover starts the next provider, if the race may take another attempt.
func (o *orchestrator) failover(ctx context.Context) {
	if !o.canStart() || len(o.inflight) >= o.route.MaxInflight {
		return
	}
	p := o.next()
	if p == "" {
		o.heldRow, o.startFailedErr = false, nil // nothing left to start: a held row is not why nothing runs
		return
	}
	o.start(ctx, p, store.RoleFailover)
}

// next is the first eligible provider not yet used this round that the gate
// allows for a fallback role; none after a caller-fault refusal.
func (o *orchestrator) next() string {
	return o.nextExcept(nil)
}

// nextExcept is next, skipping the providers in skip too.
func (o *orchestrator) nextExcept(skip map[string]bool) string {
	if o.refused != "" {
		return "" // a caller-fault refusal: only the targets working on the request go on (refuse)
	}
	for _, p := range o.candidates {
		if !o.used[p] && !skip[p] && o.gateAllows(p) {
			return p
		}
	}
	return ""
}

// gateAllows says whether the conformance gate allows provider p the role it
// would have in this race. A refusal is noted among the reasons, as
// "<target>: skipped: <the gate's reason>" as every reason names its target,
// and in routing (gateDecision).
func (o *orchestrator) gateAllows(p string) bool {
	g := o.r.cfg.Gate
	if g == nil || o.spec.gate == nil {
		return true
	}
	ok, why := g.AllowModel(context.Background(), p, o.spec.modelOn(o.r.cfg.Targets[p]), o.spec.gate, o.r.roleOf(o.route, p))
	if !ok {
		o.reasons[p] = p + ": skipped: " + why
	}
	o.gateDecision(p, ok, why)
	return ok
}

// gateDecision keeps the routing decision of candidate p as the gate's
// latest word on it: a refusal found after the plan (the target's run went
// stale, its results could not be read) makes the plan's eligible decision
// ineligible with the gate's reason, as decide says of a target the gate
// refuses (SPEC §4.2) — the same decision changed, not a second one, so a
// failed job's routing names the target the gate skipped (its next_step
// reads it). The gate allowing it again puts the plan's decision back. A
// change is recorded (recordDecisions); a word that changes nothing is not.
func (o *orchestrator) gateDecision(p string, ok bool, why string) {
	d := o.decisionOf(p)
	if d == nil {
		return // not a decision of the plan: nothing to say it of
	}
	prior, skipped := o.gateSkipped[p]
	switch {
	case ok && !skipped, !ok && skipped && d.Reason == why:
		return // routing already says so
	case ok:
		*d = prior
		delete(o.gateSkipped, p)
	default:
		if !skipped {
			if o.gateSkipped == nil {
				o.gateSkipped = map[string]Decision{}
			}
			o.gateSkipped[p] = *d
		}
		d.Eligible = false
		d.Reason, d.Cause = why, CauseConformanceGate
	}
	o.recordDecisions(context.Background(), "the conformance gate's word on "+p)
}

// decisionOf is the plan's routing decision of target p (not an event of the
// race); nil when routing has none.
func (o *orchestrator) decisionOf(p string) *Decision {
	for i := range o.decisions {
		if d := &o.decisions[i]; d.Provider == p && d.Event == "" {
			return d
		}
	}
	return nil
}

// fallbackAdmitsNow says whether a target not yet used this round, allowed by
// the gate, would be admitted by its circuit breaker now (AdmitDelay: one
// that says it admits at once; without AdmitDelay, any such target counts).
// It admits nothing: a peek, for a choice between retrying and failing over.
func (o *orchestrator) fallbackAdmitsNow() bool {
	if o.refused != "" {
		return false // a caller-fault refusal: no target not yet tried may start (nextExcept)
	}
	ad, canAsk := o.r.cfg.Admission.(AdmitDelay)
	for _, p := range o.candidates {
		if o.used[p] || !o.gateAllows(p) {
			continue
		}
		if !canAsk {
			return true
		}
		if d, known := ad.AdmitsIn(o.r.breakerOf(p, o.spec)); known && d == 0 {
			return true
		}
	}
	return false
}

// start creates an attempt row (the store enforces the blocking rule and the
// bounds), marks it running and calls the provider in a goroutine. started
// says whether it did. An attempt started beside one in flight is the job's
// extra concurrent call: it needs the route's hedge budget (holdExtra).
func (o *orchestrator) start(ctx context.Context, provider, role string) (started bool) {
	return o.startThen(ctx, provider, role, nil)
}

// startThen is start that, when the attempt is to be sent — created, marked
// running, within the deadline — calls beforeLaunch (if set) just before its
// goroutine starts, with the attempt: what must hold only of an attempt that exists, and
// before anything it does can be seen (its win, its loss), is done there.
func (o *orchestrator) startThen(ctx context.Context, provider, role string, beforeLaunch func(*store.Attempt)) (started bool) {
	o.heldRow, o.startFailedErr = false, nil // this try decides: set again if its creation gives up on a held row (or startFailed)
	defer func() {
		if !started {
			o.settleExtra() // a budget taken for it goes back
		}
	}()
	if o.pastDeadline() {
		// The deadline passed while this goroutine was busy (the gate's
		// reads that chose the target, the last attempt's recording) and the
		// deadline's timer has not been read yet: act on it as the timer
		// would. No attempt starts past the job's deadline.
		o.deadlinePassed()
		return false
	}
	draining := o.r.draining.Load()
	if draining && !o.mayStartWhileDraining(provider, role) {
		o.leftOver = true // an attempt the drain did not send
		return false      // shutting down: the job is handed over (finish)
	}
	if o.attemptLimitSpent() {
		// The store would refuse it (max_attempts): stop as its refusal
		// would (below), without asking the hedge budget or a breaker for
		// an attempt that cannot start.
		o.stopAtAttemptLimit()
		return false
	}
	if !o.holdExtra(ctx, provider, role) {
		return false
	}
	provider, role, release, ok := o.choose(ctx, provider, role)
	if !ok {
		return false
	}
	if draining && !o.mayStartWhileDraining(provider, role) {
		release(OutcomeIgnore) // the breaker chose a target whose attempt would outlast the drain
		o.leftOver = true
		return false
	}
	if role == store.RoleFailover && !o.failoverFits(ctx, provider) {
		// Too little of the deadline left to send it: the race stops
		// (failoverFits). Judged for the target the breakers chose, not
		// for one a breaker refuses (a target deferred at routing, or the
		// first asked): that one would not have been sent anyway.
		release(OutcomeIgnore)
		return false
	}
	target := o.r.cfg.Targets[provider]
	model := target.Model
	if o.spec.model != "" {
		model = o.spec.model
	}
	if err := ctx.Err(); err != nil {
		// The run was stopped (the shutdown's cut, the job cancelled or
		// won elsewhere) while the target was chosen: no attempt to create.
		// Said as a creation cut by ctx always said it.
		release(OutcomeIgnore)
		o.stop("could not create an attempt: " + err.Error())
		return false
	}
	o.sole.Store(false) // before the attempt can exist: a win read after this is not the job's whole story
	// The creation is not cut by ctx: a cancellation that came while its
	// COMMIT was in flight would give an error here although PostgreSQL may
	// still commit, leaving an attempt this run does not know of `starting`
	// until its lease expired, then `unknown` — blocking the job for a
	// request never sent. It is bounded instead, as a run's ending writes
	// are (exitContext: a few seconds past the store's own lock wait, and
	// cancelled when Stop gives up on the job runs); a run stopped meanwhile
	// learns of it once the attempt exists, and records it as never sent.
	// The bound, or Stop's hard cancel, may still cut the COMMIT in flight:
	// the attempt is named here so that such a creation can be found again
	// (abandonCreated).
	id := store.NewAttemptID()
	cctx, endCreate := o.r.exitContext(ctx)
	a, made, err := o.r.cfg.Store.CreateAttemptCounted(cctx, store.NewAttempt{
		ID: id, JobID: o.job.ID, Provider: provider, Model: model, Role: role, Price: storePrice(o.r.priceFor(provider, target, model)),
		LeaseOwner: o.r.cfg.LeaseOwner, LeaseFor: o.r.cfg.Lease, Orchestrator: o.r.cfg.LeaseOwner,
		MaxInflight: o.route.MaxInflight, MaxAttempts: o.route.MaxAttempts, Routing: o.routing, Lookup: sendsLookup(target),
	})
	endCreate()
	// The routing is recorded once per orchestration, with its first attempt;
	// a creation refused (a held row, a sibling unknown, a limit) wrote
	// nothing, so the next attempt carries it — or finish, should none come.
	// (One that failed otherwise may have committed: recorded again, the
	// same decisions.)
	if err == nil {
		o.routing = nil
	}
	busy := errors.Is(err, store.ErrBusy)
	o.heldRow = busy
	if err != nil {
		release(OutcomeIgnore)
		if role == store.RoleRetry && (busy || errors.Is(err, store.ErrAttemptBlocked)) {
			o.keepRetry(provider) // refused for a reason that passes
		}
		switch {
		case busy:
			// Another transaction holds the job's row (an operator's open
			// psql transaction, a replica cut off mid-transaction): this
			// attempt could not start, and nothing changed. Not a reason to
			// stop the race: the attempts in flight go on, a hedge is tried
			// again a hedge delay later, and a race left with nothing in
			// flight is left to its lease (leftToLease).
			o.log.Warn("could not start an attempt: another transaction holds the job's row", "provider", provider, "role", role, "err", err)
		case errors.Is(err, store.ErrAttemptLimit):
			o.stop(err.Error())
		case errors.Is(err, store.ErrInflightLimit):
			// temporary: another attempt may start when one ends
		case errors.Is(err, store.ErrLeaseLost):
			o.leaseLost = true
			o.stop(err.Error())
			o.log.Warn("this router no longer holds the job's lease (released, or taken by another router: see err); leaving it", "err", err)
		case errors.Is(err, store.ErrAttemptBlocked):
			o.blocked = true
		case errors.Is(err, store.ErrJobFinished):
			o.done = true
		default:
			// An error that says nothing of what the database did: the
			// creation may have committed all the same, and is recorded as
			// never sent if it did. Its target was not tried (startFailed).
			o.abandonCreated(ctx, id, provider, err)
			if ctx.Err() != nil {
				o.stop("could not create an attempt: " + err.Error())
				return false
			}
			return o.startFailed(ctx, provider, role, beforeLaunch, "could not create the attempt", err)
		}
		return false
	}
	if o.blocked {
		// The store created it: no attempt of the job is unknown any more
		// (canHedge). What their resolutions say comes first: one that
		// refused the caller's request leaves this attempt unsent when its
		// target was not yet tried (refuse), and so does one that rejected
		// the request as too long for a target with no more room than this
		// one's (resolvedTooLong) — the race then goes on to the next target,
		// as it would have had it known. Anything else the resolutions call
		// for (a retry) is beside this attempt, as it would have been live:
		// a failure decides its own attempt's follow-up, and this attempt is
		// another's (a sibling's failover, a silent sibling's hedge).
		tried := o.used[provider]
		o.takeResolutions(ctx)
		if !tried && (o.refused != "" || o.used[provider]) {
			release(OutcomeIgnore)
			why := "a resolution of an unknown attempt refused the caller's request, and no target not yet tried is sent it (" + o.refused + ")"
			if o.refused == "" {
				why = "a resolution of an unknown attempt rejected the request as too long, and this target has no more room for it (" + o.reasons[provider] + ")"
			}
			o.recordNotSent(ctx, a, errors.New(why))
			if p := o.next(); p != "" {
				return o.startThen(ctx, p, role, beforeLaunch)
			}
			return false
		}
	}
	wasUsed := o.used[provider] // a retry's target was
	o.used[provider] = true
	o.attempts++
	// A run stopped while the attempt was created does not mark it running
	// (cause: the shutdown's cut, say). A cancellation while the mark is in
	// flight is the same case: a mark that committed although its caller saw
	// an error leaves the attempt `running`, which RecordNotSent settles as
	// it settles a `starting` one (FinishAttempt takes either). The mark
	// renews the attempt's lease: its send is checked against the time read
	// just before it (withLeaseSet), whatever the creation waited for.
	//
	// The mark is bounded (exitWriteFor, and the store's lock wait): a
	// connection gone silent, or a lock held on the attempt's row or table,
	// does not hold the whole race (its deadline, its other attempts'
	// results) for as long as it lasts. One cut that committed all the same
	// is settled as never sent below, as a cancelled one is.
	leaseSet := time.Now()
	if err = context.Cause(ctx); err != nil {
		o.log.Info("the job's run was stopped as its attempt was created; not sending", "attempt_id", a.ID, "cause", err)
	} else {
		mctx, cancel := context.WithTimeout(ctx, exitWriteFor)
		err = o.r.cfg.Store.MarkAttemptRunningFor(mctx, a.ID, o.r.cfg.Lease)
		cancel()
		if errors.Is(err, store.ErrStateConflict) {
			o.log.Info("attempt no longer starting; not sending", "attempt_id", a.ID, "err", err)
		}
	}
	if err != nil {
		release(OutcomeIgnore)
		if errors.Is(err, store.ErrStateConflict) {
			// The attempt has ended already (its job's cancellation or end,
			// committed after its creation, cancelled it), or recovery marked
			// it unknown: this run stalled past its lease before sending it.
			o.expiredUnsent(ctx, a)
			return false
		}
		// Never sent: say so now rather than leave it to expire as unknown.
		// Why is the run's stop when there was one, not the write it cut.
		why := err
		cause := context.Cause(ctx)
		if cause != nil {
			why = cause
		}
		o.recordNotSent(ctx, a, why)
		if cause != nil {
			return false
		}
		// The database failed the mark (a dropped connection, a restart, a
		// statement's error, a lock held past its wait): the request never
		// left, so the attempt counts neither as its target tried nor
		// against max_attempts, as one the send fence kept (unsentPastLease).
		o.attempts--
		if !wasUsed {
			delete(o.used, provider)
		}
		return o.startFailed(ctx, provider, role, beforeLaunch, "could not mark the attempt running", err)
	}
	if o.pastDeadline() {
		// Creating the attempt waited for the job's row (up to the store's
		// lock wait) or its marking did, past the job's deadline: do not send
		// it now, only for the deadline to cut it at once — unknown, with a
		// request sent for nothing. It is recorded as never sent, which counts
		// neither as its target tried nor against max_attempts.
		release(OutcomeIgnore)
		o.log.Info("the job's deadline passed before the attempt could be sent; not sending", "attempt_id", a.ID, "provider", provider)
		dctx, end := o.r.detached(ctx) // as above
		defer end()
		if err := o.r.cfg.Store.RecordNotSent(dctx, a.ID,
			"the request was never sent: the job's deadline of "+o.route.Deadline.String()+" passed before it could be"); err != nil {
			unsentNotRecorded(o.log.With("attempt_id", a.ID), err)
		}
		o.deadlinePassed()
		return false
	}
	// Counted once sent: one recorded never sent above stopped counting,
	// and the count before it still holds.
	o.attemptsCounted(made)
	if beforeLaunch != nil {
		beforeLaunch(a)
	}
	o.launch(withLeaseSet(ctx, leaseSet), a, role, release, draining)
	return true
}

// recordNotSent records attempt a, created and not sent, as never sent
// because of why, rather than leave it to expire as unknown. Without the
// run's cancellation, but not past Stop's hard cancel: the record retries for
// a while when the database does not answer.
func (o *orchestrator) recordNotSent(ctx context.Context, a *store.Attempt, why error) {
	dctx, end := o.r.detached(ctx)
	defer end()
	if err := o.r.cfg.Store.RecordNotSent(dctx, a.ID, "the request was never sent: "+why.Error()); err != nil &&
		!errors.Is(err, store.ErrStateConflict) {
		unsentNotRecorded(o.log.With("attempt_id", a.ID), err)
	}
}

// expiredUnsent acts on an attempt that MarkAttemptRunning refused
// (ErrStateConflict) and was therefore never sent. Mostly its job has ended
// or was cancelled, which settled it. But this run may have stalled (a
// freeze, a partition) past the attempt's lease between its creation and its
// marking, and recovery marked it `unknown` (lease_expired) and the job with
// it: the job would wait for reconciliation or an operator for a request
// this process knows never left. It is recorded as never sent
// (store.RecordNotSentExpired); a job that was unknown only because of it
// goes back to `running` with no lease, and is submitted again here (as a
// late failure that resolves its attempt is, finishAttempt): this run no
// longer holds the job's lease, so it starts nothing more and leaves the job
// unsettled, and the job runs again once it ends.
func (o *orchestrator) expiredUnsent(ctx context.Context, a *store.Attempt) {
	dctx, end := o.r.detached(ctx) // not past Stop's hard cancel
	defer end()
	resume, err := o.r.cfg.Store.RecordNotSentExpired(dctx, o.job.ID, a.ID,
		"the request was never sent: its router stalled past the attempt's lease before sending it")
	switch {
	case errors.Is(err, store.ErrStateConflict):
		return // ended otherwise: its job's end or cancellation settled it
	case err != nil:
		unsentNotRecorded(o.log.With("attempt_id", a.ID), err)
		return
	}
	o.log.Warn("this router stalled past the attempt's lease before sending it, and recovery had marked it unknown; recorded as never sent",
		"attempt_id", a.ID, "resume", resume)
	if resume {
		o.leaseLost = true
		o.stop("this router stalled past its lease; the job runs again")
		o.r.SubmitID(o.job.ID)
	}
}

// abandonCreated records attempt id, whose creation failed with err — an
// error that is none of the store's outcomes, so the creation may have
// committed although its answer was lost (its bound or Stop's hard cancel cut
// its COMMIT in flight, the connection dropped) — as never sent, if it exists
// and is still `starting`. Left alone it would stay `starting`, known to no
// one, until its lease expired, then become `unknown` and block the job for
// a request never sent (SPEC §3). Not cut by ctx, as the other records of an
// attempt never sent are not (RecordNotSent): the store bounds it.
func (o *orchestrator) abandonCreated(ctx context.Context, id, provider string, err error) {
	found, aerr := o.r.cfg.Store.AbandonAttempt(context.WithoutCancel(ctx), o.job.ID, id,
		"the request was never sent: its attempt's creation failed ("+err.Error()+")")
	switch {
	case aerr != nil:
		unsentNotRecorded(o.log.With("attempt_id", id), aerr)
	case found:
		o.log.Warn("an attempt whose creation seemed to fail had been created; recorded as never sent",
			"attempt_id", id, "provider", provider, "err", err)
	}
}

// launch calls the provider for a running attempt in a goroutine that reports
// on o.results. drainHedge says the attempt was started while the runner
// drained, as a hedge that fits the drain: it is sent all the same.
//
// The Observer hears the attempt under the breaker that admits and counts it
// (breakerOf): the target's id, or the breaker of the model sent when the
// attempt sends a route's `models` name in place of the target's own — as
// /v1/providers counts it — so that a model the provider fails on shows
// where its breaker opens, and the target's own series (latency, errors)
// are its own model's alone.
func (o *orchestrator) launch(ctx context.Context, a *store.Attempt, role string, release func(Outcome), drainHedge bool) {
	provider := a.Provider
	t := o.r.cfg.Targets[provider]
	obs := o.r.cfg.Observer
	label := o.r.breakerOf(provider, o.spec)
	obs.AttemptStarted(label, role)
	if role == store.RoleHedge {
		obs.HedgeStarted(label)
	}
	wctx, f := o.watchFirstByte(ctx, a)
	actx, cancel := context.WithCancelCause(wctx)
	o.inflight[a.ID] = cancel
	go func() {
		gostack.Reserve()
		sctx, endSpan := startAttemptSpan(actx, o.job, a, t, a.Model)
		res := o.r.runAttempt(sctx, o.job, a, t, o.spec, &o.sole, drainHedge, f)
		endSpan(res)
		cancel(nil)
		release(res.breakerOutcome())
		var kind providers.Kind
		if res.err != nil {
			kind = res.err.Kind
		}
		obs.AttemptFinished(label, role, res.state, kind, res.latency, res.usage)
		observeCost(obs, o.job.Owner, t.Provider.Name(), a.Model, o.r.priceFor(provider, t, a.Model), res.usage)
		if res.state == store.AttemptLost && !res.discarded && res.callState == "" { // another attempt won (notWon)
			obs.RaceLost(label)
		}
		o.results <- res
	}()
}

// failReason explains a failed job in words a person can act on.
func (o *orchestrator) failReason() string {
	var parts []string
	if o.stopWhy != "" {
		parts = append(parts, o.stopWhy)
	}
	names := make([]string, 0, len(o.reasons))
	for p := range o.reasons {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		if o.reasons[p] != o.stopWhy {
			parts = append(parts, o.reasons[p])
		}
	}
	if len(parts) == 0 {
		return "no provider could complete the job"
	}
	return strings.Join(parts, "; ")
}

func (r *Runner) targetRetries(provider string) int {
	if t, ok := r.cfg.Targets[provider]; ok {
		return t.MaxRetries
	}
	return 0
}

// backoff is capped exponential backoff with full jitter, never shorter than
// the provider's Retry-After.
func (r *Runner) backoff(n int, retryAfter time.Duration) time.Duration {
	ceil := r.cfg.Backoff.Ceiling(n)
	d := time.Duration(rand.Int64N(int64(ceil) + 1))
	return max(d, retryAfter)
}
