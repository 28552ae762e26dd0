package race

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// runAttempt calls the provider for one running attempt, judges the answer and
// records the attempt's end. The context's cause says why it was cut short.
//
// sole, when not nil, is true while the attempt is its job's only attempt: the
// orchestrator clears it before it creates any other. A win read while it is
// still true (after the commit) can announce the whole job to this replica's
// waiters, who then need not read it back: any attempt created later would
// find the job finished.
//
// drainHedge says the attempt was created while the runner drained, as a
// hedge that ends before the drain does (drainFits): it is sent.
//
// f is the attempt on the hedge clock (nil: none), which says whether a hedge
// was started for it (silentPastHedge).
func (r *Runner) runAttempt(ctx context.Context, job *store.Job, a *store.Attempt, t *Target, sp *spec, sole *atomic.Bool, drainHedge bool, f *flight) attemptResult {
	log := lazyWith(r.cfg.Log, "job_id", job.ID, "attempt_id", a.ID, "owner", job.Owner, "provider", a.Provider, "seq", a.Seq, "role", a.Role)
	// The job's deadline cuts the attempt (errDeadline) even while its
	// orchestration is busy and has not read its timer yet.
	ctx, endDeadline := boundByJobDeadline(ctx)
	defer endDeadline()
	// The attempt sent with its job, alone, as the job's run began: it has
	// the job's whole deadline (excusedByDeadline).
	opening := sole != nil && sole.Load()
	// What the attempt did is recorded whatever happens to ctx, until Stop
	// gives up on the job runs still going (detached).
	bg, endBg := r.detached(ctx)
	defer endBg()
	if r.draining.Load() && !drainHedge || errors.Is(context.Cause(ctx), errShutdown) {
		// The router began shutting down after this attempt was created and
		// before it was sent: do not send it now, to be cut by the shutdown
		// and left unknown; record that it was never sent (it then counts
		// neither as its provider tried nor against max_attempts). A job's
		// only attempt (one created with the job a moment before the drain)
		// is handed over with the job's lease, so another replica runs the
		// job at once; otherwise the orchestration's end releases the lease.
		const why = "the request was never sent: the router was shutting down"
		var err error
		if sole != nil && sole.Load() {
			hctx, cancel := r.exitContext(ctx)
			err = r.cfg.Store.HandOverUnsent(hctx, job.ID, a.ID, r.cfg.LeaseOwner, why)
			cancel()
		} else {
			err = r.cfg.Store.RecordNotSent(bg, a.ID, why)
		}
		if err != nil {
			unsentNotRecorded(log, err)
			return attemptResult{attempt: a, state: "abandoned"}
		}
		return attemptResult{attempt: a, state: attemptUnsent}
	}
	if ranOut, held := r.leaseRanOut(ctx, job.ID, a.ID); ranOut {
		// Sent now, it could reach its provider after recovery marked it
		// unknown and reconciliation looked it up (send_fence.go).
		return r.leaseRanOutUnsent(bg, job, a, held, log)
	}
	req := sp.request(a, job.ID)
	// A silent loser is not cut at once when its target is expected to
	// answer later, or when it is its breaker's probe (keepLoser).
	keptCtx, endKeep := r.keepLoser(ctx, f)
	callCtx, cancel := context.WithTimeout(keptCtx, t.Timeout)
	callCtx, ttfb := r.probeTTFB(callCtx, r.ttfbKey(a.Provider, a.Model)) // per target and model sent (SPEC §15)
	start := time.Now()
	resp, err := r.call(callCtx, t, req)
	cancel()
	endKeep()
	waited := time.Since(start)
	latency := waited.Milliseconds()
	ttfb.ended(resp, err)

	cause := context.Cause(ctx)
	// A complete answer is judged and offered whatever happened meanwhile (a
	// deadline, a shutdown, a cancellation): the compare-and-swap decides.
	if err != nil {
		pe := providers.Classify(a.Provider, err)
		if pe == nil {
			pe = providers.NewError(a.Provider, providers.KindTimeout, "cut by the job's deadline")
		}
		// An error the provider answered with (an error status, an error
		// body) is its own, even as a deadline or the shutdown cuts the
		// call; anything else ending as either cuts it is read as the cut,
		// whatever kind its adapter or transport gave the cancelled read
		// (net/http returns the context's cause, not a cancellation).
		providerAnswered := pe.StatusCode >= 400 || pe.AnsweredWithError
		cutByShutdown := errors.Is(cause, errShutdown) && (pe.Kind == providers.KindCancelled || !providerAnswered)
		if cutByShutdown {
			// The process stops (its drain ran out, or it was told to stop
			// at once): what the attempt is known to have done is recorded
			// now, within a short bound (Stop waits for it), rather than
			// left to the lease's expiry.
			if pe.NotSent {
				return r.shutdownUnsent(bg, a, log)
			}
			var cancel context.CancelFunc
			bg, cancel = context.WithTimeout(bg, shutdownRecordFor)
			defer cancel()
		}
		// What the provider billed, read before a deadline relabels pe below.
		out, usage := billedOutcome(t, sp, a, pe)
		// The deadline's cut is a call that ended because it was cut (its
		// context cancelled); as the shutdown's above.
		cutAtDeadline := errors.Is(cause, errDeadline) && (pe.Kind == providers.KindCancelled || !providerAnswered)
		state := store.AttemptFailed
		switch {
		case cutAtDeadline && pe.Received:
			// The provider had begun answering: the outcome is known (SPEC §15).
			pe = &providers.Error{Provider: a.Provider, Kind: providers.KindStreamTimeout, Fault: providers.FaultRouter,
				Action: providers.ActionStop, Received: true, Message: "cut by the job's deadline after the provider began answering", Err: err}
		case cutAtDeadline && pe.NotSent:
			// The request was not written whole (no connection made, or a
			// body the provider had not read all of): the outcome is known —
			// nothing happened (SPEC §15's unknown is
			// for a request sent and not answered).
			pe = &providers.Error{Provider: a.Provider, Kind: providers.KindTimeout, Fault: providers.FaultRouter,
				Action: providers.ActionStop, NotSent: true, Message: "cut by the job's deadline before the request was sent whole: the request was not sent, so the provider cannot have worked on it", Err: err}
		case cutAtDeadline:
			state = store.AttemptUnknown
			pe = &providers.Error{Provider: a.Provider, Kind: providers.KindTimeout, Fault: providers.FaultRouter,
				Action: providers.ActionStop, OutcomeUnknown: true, Message: "cut by the job's deadline after the request was sent, before any response byte", Err: err}
		case cutByShutdown && pe.Received:
			// The provider had begun answering: a known outcome (SPEC §15).
			// Retryable: the job is handed over, and the replica that adopts
			// it sends the request again: the attempt uses up neither its
			// target nor a retry, only one of the route's max_attempts
			// (prepare, cutAnswering).
			pe = &providers.Error{Provider: a.Provider, Kind: KindShutdown, Fault: providers.FaultRouter,
				Action: providers.ActionRetry, Received: true, Message: shutdownReceivedWhy, Err: err}
		case cutByShutdown:
			state = store.AttemptUnknown
			pe = &providers.Error{Provider: a.Provider, Kind: KindShutdown, Fault: providers.FaultRouter,
				Action: providers.ActionStop, OutcomeUnknown: true, Message: shutdownSilentWhy, Err: err}
		case (errors.Is(cause, errLoser) || errors.Is(cause, errJobCancelled)) && !providerAnswered, pe.Kind == providers.KindCancelled:
			// Cut by another attempt's win or the job's cancellation. An
			// error the provider answered with before the cut (a 5xx, a 429)
			// is its own, as at the deadline: recorded failed, and its
			// breaker counts it.
			state = store.AttemptCancelled
		case pe.OutcomeUnknown:
			state = store.AttemptUnknown
		}
		var est providers.Usage
		estimated := false
		if out.Usage == nil { // the billed answer's usage, read before pe was relabelled, is not guessed over
			est, estimated = estimatedUsage(t, sp, a, state, pe)
		}
		if estimated {
			out.Usage, usage = est, est
		} else if raised, ok := provisionalUsage(t, sp, a, usage, pe); ok && out.Usage != nil {
			out.Usage, usage = raised, raised
		}
		if pe.ProviderMessage != "" {
			log = log.With("provider_message", pe.ProviderMessage) // the operator's, not the tenant's
		}
		if pe.ProviderRequestID != "" {
			log = log.With("provider_request_id", pe.ProviderRequestID) // what the provider's support asks for
		}
		res := attemptResult{attempt: a, state: state, err: pe, reason: fmt.Sprintf("%s: %s", a.Provider, describe(pe)), latency: waited,
			cutByDeadline: cutAtDeadline && excusedByDeadline(pe.Received, waited, t, opening)}
		hedgedAfter, silent := f.silentPastHedge()
		res.silentLoser = state == store.AttemptCancelled && errors.Is(cause, errLoser) && !pe.Received && silent
		detail := attemptError(pe)
		if state == store.AttemptCancelled && errors.Is(cause, errLoser) {
			detail["message"] = "cancelled: another attempt won"
		}
		if res.silentLoser {
			detail["message"] = fmt.Sprintf("cancelled: another attempt won, started as a hedge after this one had no response byte for %s; "+
				"it still had none when cut, so its provider's circuit breaker counts it as a failure", hedgedAfter.Round(time.Millisecond))
			detail[store.BreakerKey] = store.BreakerFailure
		}
		markIgnored(detail, res)
		out.State, out.Error, out.LatencyMS = state, detail, latency
		stored, recorded, written := r.finishAttemptAs(bg, job, a, out, log)
		if stored != state {
			// An unknown end on a job that had already ended, stored as the
			// job's end settles its attempts (lost, cancelled): counted and
			// logged as stored; its breaker still hears the call's end
			// (breakerOutcome), and the store marked its error with what
			// the breaker counts ("breaker": "failure", unless marked
			// ignored: store's unknownEndErrorSQL) for /v1/providers.
			res.state, res.callState = stored, state
		}
		attrs := []any{"state", res.state, "kind", pe.Kind, "fault", pe.Fault, "action", pe.Action, "status", pe.StatusCode, "latency_ms", latency}
		if res.silentLoser || (res.callState != "" && res.breakerOutcome() == OutcomeFailure) {
			// Still at the loser's level (one per hedged job): its breaker
			// counting it, and opening, is what the operator sees.
			attrs = append(attrs, store.BreakerKey, store.BreakerFailure)
		}
		log.Log(bg, endLevel(state, cause), "attempt ended without an answer", attrs...)
		if !written {
			// The attempt's usage was not stored: another transition settled
			// the attempt first and kept its own record, with usage of its
			// own, or the record could not be written. The metrics do not
			// count it either, so that router_cost_usd_total and the job's
			// cost_usd agree. One settled without usage by the job's
			// cancellation, a sibling's win (lost) or a resolution (failed)
			// was given it (finishAttempt: store.RecordCancelledUsage).
			usage = providers.Usage{}
		}
		if !recorded {
			return unrecorded(res, log)
		}
		res.usage = usage
		return res
	}
	if u, ok := answerUsage(t, sp, a, resp); ok {
		resp.Usage = u
	}
	doc, violations, jerr := judgeAnswer(sp, resp, log)
	if jerr != nil {
		return r.unjudged(bg, job, a, resp, jerr, attemptResult{attempt: a, latency: waited}, log)
	}
	if len(violations) > 0 {
		// The path can be the output's own key (no_extra_keys, a duplicate
		// key): cut, so the line is bounded whatever the model wrote.
		log.Warn("attempt output failed validation", "violations", len(violations),
			"first_rule", violations[0].Rule, "first_path", truncateAttr(violations[0].Path))
		res := attemptResult{attempt: a, state: store.AttemptInvalid, usage: resp.Usage, latency: waited,
			reason: fmt.Sprintf("%s: %s (%s)", a.Provider, invalidWhy(job, sp, violations[0]), violations[0].String()),
			broken: violations[0].Rule + " at " + violations[0].Path, callers: sp.callers != nil && sp.callers(violations[0])}
		detail := invalidOutputError(violations, res)
		recorded, written := r.finishAttempt(bg, job, a, store.AttemptOutcome{
			State: store.AttemptInvalid, ValidationErrors: violations, Usage: resp.Usage,
			ProviderResponseID: resp.ResponseID, ResponseModel: resp.Model, LatencyMS: latency, Error: detail,
		}, log)
		if !recorded {
			return unrecorded(res, log)
		}
		if !written {
			res.usage = providers.Usage{} // not stored: not counted either (see above)
		}
		return res
	}
	off, err := r.cfg.Store.OfferCompletion(bg, store.Completion{
		JobID: job.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: doc, Usage: resp.Usage,
		ProviderResponseID: resp.ResponseID, ResponseModel: resp.Model, LatencyMS: latency,
	})
	won, final := off.Won, off.Job
	usage := resp.Usage
	if !off.UsageStored {
		// A discarded answer whose attempt already had usage (reported, or
		// an estimate a reported figure does not replace): the stored cost
		// is that, and the metrics count what is stored, once.
		usage = providers.Usage{}
	}
	if err != nil {
		// The win may have committed although its answer was lost: if so, it
		// is this run's win, reported as one (won, its usage stored with it)
		// so that the orchestrator counts the job's settlement and ends the
		// race (committedWin).
		log.Warn("could not record completion; reading its job back", "err", err)
		if r.committedWin(bg, job, a, log) {
			won, err = true, nil
		}
	}
	if err != nil {
		log.Error("could not record completion; the lease will expire and recovery decides", "err", err)
		// The win may have committed unseen, and its notification is not
		// delivered on this replica (it is announced here, in memory): wake
		// this replica's waiters so they read the job.
		r.cfg.Listener.Publish(job.ID, "")
		return attemptResult{attempt: a, state: "abandoned"}
	}
	log.Debug("attempt completed", "won", won, "latency_ms", latency)
	if won {
		// Always announced here, in memory: a listener paired with this
		// runner's store does not deliver the win's notification again
		// (store.Listener.SkipNotificationsOf).
		if final != nil && sole != nil && sole.Load() {
			r.cfg.Listener.PublishJob(final)
		} else {
			r.cfg.Listener.Publish(job.ID, store.JobSucceeded)
		}
		return attemptResult{attempt: a, state: store.AttemptWon, usage: resp.Usage, latency: waited}
	}
	// Not this answer's win: a race lost, or an answer discarded (notWon).
	return r.notWon(bg, job, a, off, usage, waited, log)
}

// invalidWhy says what an answer that failed judging broke, for the job's
// failure note: a prompt job's answer breaks its prompt's contract; a chat
// job's (no prompt) breaks the caller's own response_format, or, for a rule
// no request sets (an empty answer, malformed tool calls: chat.ProviderRule),
// is unusable whatever was asked.
func invalidWhy(job *store.Job, sp *spec, v contract.Violation) string {
	if _, isChat := chat.Route(job.Operation); !isChat {
		return "output breaks the prompt's contract"
	}
	switch {
	case chat.ProviderRule(v.Rule):
		return "the answer cannot be used"
	case sp.format != nil && sp.format.Type == "json_object":
		return "the answer is not the JSON object the request's response_format asks for"
	}
	return "the answer does not match the request's response_format.json_schema"
}

// endLevel is the level of the line that logs an attempt's end without an
// answer, cut short by cause. An attempt the router stopped itself is no
// provider's failure: a hedge loser cancelled when another attempt won — one
// per hedged job on a healthy router — is logged at debug, an attempt of a
// cancelled job at info. A provider's failure, an unknown outcome, a cut by
// the job's deadline or by the router's shutdown are the operator's to see
// (warn).
func endLevel(state string, cause error) slog.Level {
	switch {
	case state != store.AttemptCancelled:
		return slog.LevelWarn
	case errors.Is(cause, errLoser):
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// markIgnored marks an attempt's stored error with "breaker": "ignored" when
// its provider's circuit breaker does not count it (outcomeOf): an answer
// that broke only the caller's own response_format, an attempt the job's
// deadline cut when that says nothing of the target (excusedByDeadline), one
// cut by this router's shutdown. /v1/providers' stats
// (store.ProviderStats) read the mark, so they follow the breaker's rule.
// A cancelled attempt counts in neither anyway and is not marked.
// invalidOutputError is the error an attempt whose answer broke the
// contract is stored with (kind invalid_output, the provider's fault, fail
// over), live or found later by reconciliation: res is the attempt's result
// (its callers flag marks a violation of the caller's own schema, which the
// breaker ignores).
func invalidOutputError(violations []contract.Violation, res attemptResult) map[string]any {
	detail := map[string]any{"kind": "invalid_output", "fault": providers.FaultProvider, "action": providers.ActionFailover,
		"message": fmt.Sprintf("output failed %d contract check(s); first: %s", len(violations), violations[0].String())}
	markIgnored(detail, res)
	return detail
}

func markIgnored(detail map[string]any, res attemptResult) {
	if res.state != store.AttemptCancelled && outcomeOf(res) == OutcomeIgnore {
		detail[store.BreakerKey] = store.BreakerIgnored
	}
}

// breakerOutcome is what the attempt's end tells its target's breaker
// (outcomeOf): that of the call as it ended, not of the state the store
// recorded in its place (callState) — a call that timed out is its target's
// failure even when its job had ended meanwhile and it was stored lost.
func (res attemptResult) breakerOutcome() Outcome {
	if res.callState != "" {
		res.state = res.callState
	}
	return outcomeOf(res)
}

// KindShutdown is the error kind of an attempt cut because its router was
// stopped — its drain budget ran out, or it was told to stop at once — and
// not because of anything its provider did (the breaker and the error
// metrics do not count it).
const KindShutdown providers.Kind = "shutdown"

// The messages of an attempt cut by its router's shutdown.
const (
	shutdownReceivedWhy = "this router was stopped (its shutdown.drain ran out, or it was told to stop at once) after the provider began answering; " +
		"the answer will not arrive whole: the job is handed over, and the replica that adopts it sends the request again " +
		"unless the route's max_attempts is spent (this attempt counts against it, not against max_retries)"
	shutdownSilentWhy = "this router was stopped (its shutdown.drain ran out, or it was told to stop at once) while the attempt waited for its first byte; " +
		"the provider may or may not have done the work"
)

// shutdownRecordFor bounds the write that records what an attempt cut by the
// shutdown is known to have done: Stop waits for it. Past it the attempt is
// left to its lease, as an attempt of a process that died.
const shutdownRecordFor = 5 * time.Second

// shutdownUnsent records an attempt cut by the shutdown before its request
// was sent whole (no connection made, or a body not read all of): never sent, so it counts neither as its provider
// tried nor against max_attempts.
func (r *Runner) shutdownUnsent(ctx context.Context, a *store.Attempt, log *slog.Logger) attemptResult {
	ctx, cancel := context.WithTimeout(ctx, shutdownRecordFor)
	defer cancel()
	if err := r.cfg.Store.RecordNotSent(ctx, a.ID, "the request was never sent whole: the router was stopped before the provider had all of it"); err != nil {
		unsentNotRecorded(log, err)
		return attemptResult{attempt: a, state: "abandoned"}
	}
	return attemptResult{attempt: a, state: attemptUnsent}
}

// attemptUnsent is the end of an attempt that was never sent because the
// router began shutting down: recorded as such (store.RecordNotSent), and
// handed over with its job when it was the job's only attempt
// (store.HandOverUnsent); or because its lease may have run out before it
// could be sent (attemptResult.pastLease: leaseRanOutUnsent).
const attemptUnsent = "unsent"

// describe is an error in a person's words, for the job's `error`.
func describe(pe *providers.Error) string {
	s := string(pe.Kind)
	if pe.StatusCode != 0 {
		s += fmt.Sprintf(" (HTTP %d)", pe.StatusCode)
	}
	if pe.Message != "" {
		s += ": " + pe.Message
	}
	return s
}

// call uses the streaming API when the target asks for it and the adapter has it.
// A panic in the adapter (on whatever the provider sent) fails this attempt,
// logged with its stack, instead of ending the process; so does an adapter
// that returns neither an answer nor an error.
func (r *Runner) call(ctx context.Context, t *Target, req *providers.Request) (resp *providers.Response, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.cfg.Log.Error("provider adapter panicked; the attempt fails", "provider", t.Provider.Name(),
				"attempt_id", req.AttemptID, "panic", v, "stack", string(debug.Stack()))
			resp, err = nil, providers.NewError(t.Provider.Name(), providers.KindAdapterPanic, fmt.Sprintf("the adapter panicked on this provider's answer: %v", v))
		}
	}()
	if s, ok := t.Provider.(providers.Streamer); ok && t.Stream {
		resp, err = s.CompleteStream(ctx, req, nil)
	} else {
		resp, err = t.Provider.Complete(ctx, req)
	}
	if resp == nil && err == nil {
		// An adapter bug: there is nothing to judge, and judging nothing
		// would panic outside this recover.
		err = providers.NewError(t.Provider.Name(), providers.KindAdapterPanic, "the adapter returned neither an answer nor an error")
	}
	recordResponse(ctx, resp)
	return resp, err
}

// attemptError is the attempt's `error` field: what happened, in words a person
// can act on, plus the taxonomy.
func attemptError(pe *providers.Error) map[string]any {
	m := map[string]any{"kind": pe.Kind, "fault": pe.Fault, "action": pe.Action, "message": pe.Error()}
	if pe.StatusCode != 0 {
		m["status"] = pe.StatusCode
	}
	if pe.Code != "" {
		m["code"] = pe.Code
	}
	if pe.Param != "" {
		m["param"] = pe.Param // the request member the provider's error names
	}
	if pe.ProviderRequestID != "" {
		m["provider_request_id"] = pe.ProviderRequestID // the provider's id of the request, for its support
	}
	if pe.RetryAfter > 0 {
		m["retry_after_ms"] = pe.RetryAfter.Milliseconds()
	}
	if pe.OutcomeUnknown {
		m["outcome_unknown"] = true
	}
	return m
}

// finishAttempt records an attempt's non-winning end. If recovery already
// marked it unknown (its lease expired while the call was still running), a
// definitive answer that came after resolves it, so the job need not wait for
// an operator: when that was its last unknown attempt, the job goes back to
// running with no lease, and is submitted again here (as reconciliation
// submits a job its resolution resumed): this run, fenced, can start nothing
// more, and the job is run again once it ends, without waiting for a
// recovery pass to adopt it.
//
// recorded is false when the end could not be written (a database error, or
// rows held past the lock wait, for as long as the store tries it again:
// store.FinishAttemptAs): the attempt is then still in flight in the
// database, until its lease expires, and its run abandons it (unrecorded).
// It is true when it was written, or when the attempt had already left flight
// (a state conflict): the database then holds its state, not this process.
// written is true when out's record, or at least its usage, was stored: an
// attempt that another hand had already settled while its request was out
// (the job's cancellation, a sibling's win that settled it lost, a
// resolution that failed it) is given out's usage when it has none
// (cancelledUsage).
func (r *Runner) finishAttempt(ctx context.Context, job *store.Job, a *store.Attempt, out store.AttemptOutcome, log *slog.Logger) (recorded, written bool) {
	_, recorded, written = r.finishAttemptAs(ctx, job, a, out, log)
	return recorded, written
}

// finishAttemptAs is finishAttempt, and says which state out's record was
// stored in (store.FinishAttemptAs): out.State but for an unknown end on a
// job that had already ended (lost, cancelled). It is out.State when out was
// not stored as the attempt's end (another hand had settled it, or the
// record could not be written).
func (r *Runner) finishAttemptAs(ctx context.Context, job *store.Job, a *store.Attempt, out store.AttemptOutcome, log *slog.Logger) (stored string, recorded, written bool) {
	stored, err := r.cfg.Store.FinishAttemptAs(ctx, a.ID, out)
	if err == nil {
		return stored, true, true
	}
	recorded, written = r.finishConflict(ctx, job, a, out, err, log)
	return out.State, recorded, written
}

// finishConflict is finishAttempt's end when FinishAttempt failed with err.
func (r *Runner) finishConflict(ctx context.Context, job *store.Job, a *store.Attempt, out store.AttemptOutcome, err error, log *slog.Logger) (recorded, written bool) {
	if !errors.Is(err, store.ErrStateConflict) {
		log.Error("could not record attempt", "state", out.State, "err", err)
		return false, false
	}
	if out.State == store.AttemptFailed || out.State == store.AttemptInvalid {
		// A billed failure keeps its usage, as FinishAttempt would have
		// recorded it (and as the metrics count it). The job's row is waited
		// for as long as FinishAttempt waits (store.TransitionLockWait): a row
		// another transaction holds for longer leaves the attempt unknown, as
		// if the answer had never come, rather than holding this goroutine —
		// and the job's orchestration, which waits for its result — as long
		// as it is held. The failure is the attempt's error, in place of the
		// lease expiry that made it unknown: the resumed race acts on it as
		// the live race would have (prepare: a content-policy rejection or a
		// bad request is not failed over, SPEC §6.3; resumeRetry: a transient
		// failure with retries left is retried), and the job's reason says
		// what the provider did. An invalid answer is stored `invalid`, with
		// its validation errors, as FinishAttempt would have stored it: the
		// job shows why the answer was refused.
		res := store.Resolution{JobID: job.ID, Seq: a.Seq, Outcome: "failed",
			Note:  "the provider answered after this attempt's lease expired, with a definitive failure",
			Usage: out.Usage, ProviderResponseID: out.ProviderResponseID, ResponseModel: out.ResponseModel,
			Error: out.Error, LockWait: store.TransitionLockWait}
		if out.State == store.AttemptInvalid {
			res.Note = "the provider answered after this attempt's lease expired, with an answer that breaks the contract"
			res.ValidationErrors = out.ValidationErrors
		}
		resume, err := r.cfg.Store.ResolveAttempt(ctx, res)
		switch {
		case err == nil:
			if resume {
				log.Info("the attempt's late failure resolved it; the job resumes")
				r.SubmitID(job.ID)
			}
			return true, true
		case errors.Is(err, store.ErrStateConflict), errors.Is(err, store.ErrJobFinished):
		case errors.Is(err, store.ErrBusy):
			log.Warn("could not resolve the attempt with its late failure: another transaction holds the job's row or the attempt's; "+
				"the attempt stays unknown for reconciliation or an operator to resolve", "err", err)
			return true, false
		default:
			log.Error("could not resolve the attempt with its late failure", "err", err)
			return true, false
		}
	}
	return true, r.cancelledUsage(ctx, a, out, log)
}

// cancelledUsage stores the usage of an attempt whose end FinishAttempt
// found already settled, when what settled it was the caller's cancellation
// of the job while the request was out, a sibling's win that settled it
// lost, or a resolution that failed it (store.RecordCancelledUsage): the
// provider bills the input of a request it received all the same. written
// says whether it was stored, so that the metrics count an estimate only
// then — once, with the attempt's cost_usd.
func (r *Runner) cancelledUsage(ctx context.Context, a *store.Attempt, out store.AttemptOutcome, log *slog.Logger) (written bool) {
	if out.Usage == nil {
		return false
	}
	written, err := r.cfg.Store.RecordCancelledUsage(ctx, a.ID, out.Usage)
	if err != nil {
		log.Warn("could not record the usage of an attempt its job's cancellation settled", "err", err)
	}
	return written
}

// unrecorded is the end of an attempt whose end (res.state) could not be
// recorded, even after the store's retries (finishAttempt's recorded false):
// the attempt is still in flight in the database. Handled as the end it had,
// the race would fail over beside it (or be refused, max_inflight), and the
// job could not be settled while it is in flight: it would end unknown at the
// lease's expiry all the same, with another target sent the request for
// nothing — and an unknown end would leave nothing in the database to block a
// new attempt while the provider may have done the work. Abandoned instead:
// the race stops, and the lease expires and recovery marks the attempt
// unknown (SPEC §6.7, §6.8). So is an attempt cut by the shutdown whose end
// could not be recorded within its bound.
func unrecorded(res attemptResult, log *slog.Logger) attemptResult {
	log.Error("could not record the attempt as " + res.state + "; the lease will expire and recovery decides")
	return attemptResult{attempt: res.attempt, state: "abandoned", err: res.err, reason: res.reason}
}

// unsentNotRecorded logs that the record of an attempt never sent
// (RecordNotSent, HandOverUnsent) could not be written. It is not tried
// again: the store already waited for the job's row as long as any of the
// router's own transactions holds it, and one held for longer (an operator's
// open transaction, a replica cut off mid-transaction) outlasts the run's
// exit budget, which the run's own last writes — they need the same row —
// spend anyway. The attempt is left to its lease, as when a process dies:
// recovery marks it unknown (lease_expired) when the lease expires, and
// reconciliation, finding no record of it at a provider that has lookups,
// fails it as an attempt that never tried its target.
func unsentNotRecorded(log *slog.Logger, err error) {
	if errors.Is(err, store.ErrBusy) {
		log.Warn("could not record an attempt as not sent: another transaction holds its job's row; "+
			"the attempt is left to its lease, and recovery marks it unknown when the lease expires", "err", err)
		return
	}
	log.Warn("could not record an attempt as not sent; the attempt is left to its lease", "err", err)
}
