package race

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"time"

	"github.com/routerhq/router/internal/store"
)

// choose asks provider's breaker (the one of the model the attempt sends:
// breakerOf) to admit an attempt of role; a refusal moves on to the next
// eligible provider, as a failover (§6.3: an open breaker fails over).
// ok=false: no provider was admitted. release must be called once with the
// attempt's outcome.
//
// A refused target is skipped for this choice only, not used: its breaker's
// refusal passes by itself (a half-open breaker's probe ends, an open one
// half-opens), so a later hedge, failover or retry asks it again, and a race
// left with nothing in flight and only such targets to try waits for them
// (waitForBreakers) rather than failing the job. The refusal is noted in
// routing (noteBreakerRefusal) and among the job's reasons: as the target's
// reason while it is not tried (once it is, its attempt's outcome replaces
// it), after its attempt's failure when it refuses that target's retry.
func (o *orchestrator) choose(ctx context.Context, provider, role string) (string, string, func(Outcome), bool) {
	var skip map[string]bool // refused in this choice: not asked again in it
	for provider != "" {
		adm := o.r.cfg.Admission
		if adm == nil {
			return provider, role, func(Outcome) {}, true
		}
		key := o.r.breakerOf(provider, o.spec)
		rel, ok, why := adm.Admit(key)
		if ok {
			if o.deferred(provider) {
				o.admitDeferred(provider)
			}
			delete(o.breakerRefused, provider)
			if !o.used[provider] {
				// Tried now: what its attempt ends with is its reason, not
				// an earlier refusal (this breaker's, the gate's), which a
				// failure would replace but an unknown outcome or a
				// cancellation would leave, saying the target was skipped.
				delete(o.reasons, provider)
			}
			return provider, role, rel, true
		}
		why = breakerWhy(provider, key, why)
		if skip == nil {
			skip = map[string]bool{}
		}
		skip[provider] = true
		if !o.used[provider] {
			o.breakerRefused[provider] = key
		}
		if r, tried := o.reasons[provider]; tried && o.used[provider] {
			// A retry refused: the target's attempt's failure stays its
			// reason, the refusal is why it was not retried.
			o.reasons[provider] = r + "; not retried: " + why
		} else {
			o.reasons[provider] = provider + ": skipped: " + why
		}
		o.log.Info("provider not admitted", "provider", provider, "reason", why)
		o.noteBreakerRefusal(ctx, provider, why)
		provider = o.nextExcept(skip)
		if role == store.RolePrimary || role == store.RoleRetry {
			role = store.RoleFailover
		}
	}
	return "", role, nil, false
}

// noteBreakerRefusal records in the job's routing that provider's breaker
// refused an attempt the race chose for it (SPEC §4.2: routing says why a
// target was not used), once per target per job run: a target refused again
// at each hedge delay is not written again.
func (o *orchestrator) noteBreakerRefusal(ctx context.Context, provider, why string) {
	if o.breakerNoted[provider] {
		return
	}
	o.breakerNoted[provider] = true
	if d := o.decisionOf(provider); d != nil && !d.Eligible && d.Cause == CauseBreaker {
		// A deferred target: its decision says its breaker refuses it
		// already, brought up to date rather than said twice.
		if d.Reason != why {
			d.Reason = why
			o.recordDecisions(ctx, "the breaker refusal")
		}
		return
	}
	o.decisions = append(o.decisions, Decision{Provider: provider, Event: "breaker_refused", Eligible: true, Reason: why})
	o.recordDecisions(ctx, "the breaker refusal")
}

// waitForBreakers decides, for a race that would end now with nothing in
// flight, whether the job waits for a circuit breaker instead of being
// settled: when the targets left to try (not used this round) are refused
// only by their breakers, as prepare decides for a job it runs (breakerWait,
// bounded by the job's deadline: breakerAgain). It then sets o.breakerWait
// (runJob runs the job again after it, its lease released meanwhile) and
// records the routing not yet recorded. A race stopped (a caller fault, a
// limit, its deadline), blocked, refused or cancelled (ctx done: the job is
// settled as it stands) settles as before, and so does one whose Admission
// shows no breaker states (stateView; a breaker set always does).
func (o *orchestrator) waitForBreakers(ctx context.Context) bool {
	o.noteDeferred() // whatever the race ends with, its error names them
	if o.stopped || o.blocked || o.refused != "" || o.done || ctx.Err() != nil {
		return false
	}
	if o.attemptLimitSpent() {
		// No breaker's admission would let another attempt start: the
		// store would refuse it (max_attempts). It fails now.
		o.stopAtAttemptLimit()
		return false
	}
	if _, canSee := o.r.cfg.Admission.(stateView); !canSee {
		// The job's next run could not see the breakers' refusals (prepare
		// weighs their states): it would only be refused again, without end.
		return false
	}
	pending := false
	for p := range o.breakerRefused {
		pending = pending || !o.used[p]
	}
	for p := range o.byBreaker { // refused at the plan, not asked since
		pending = pending || o.pendingDeferred(p)
	}
	if !pending {
		return false
	}
	// The decisions as a run of the job would make them now: the targets
	// left to try are ineligible, by their breaker when it refused them.
	byBreaker := maps.Clone(o.byBreaker)
	if byBreaker == nil {
		byBreaker = map[string]string{}
	}
	decisions := make([]Decision, 0, len(o.decisions))
	for _, d := range o.decisions {
		if d.Event != "" {
			continue
		}
		if !d.Eligible && d.Cause != CauseBreaker {
			delete(byBreaker, d.Provider) // deferred, then skipped by the gate: that does not clear by itself
		}
		if d.Eligible && !o.used[d.Provider] {
			d.Eligible = false
			if key, ok := o.breakerRefused[d.Provider]; ok {
				byBreaker[d.Provider] = key
			}
		}
		decisions = append(decisions, d)
	}
	again, why := o.breakerAgain(o.r.breakerWait(decisions, byBreaker, o.used))
	if again <= 0 {
		if why != "" {
			o.stop(why)
		}
		return false
	}
	if o.routing != nil { // not recorded by an attempt's creation: record what routing says now
		wctx, cancel := o.r.exitContext(ctx)
		if err := o.r.cfg.Store.SetRouting(wctx, o.job.ID, o.r.cfg.LeaseOwner, o.routing); err != nil {
			o.log.Error("could not record routing", "err", err)
		}
		cancel()
	}
	o.log.Info("no target left to try admits the job now (circuit breakers); running it again when one may", "in", again, "reason", o.failReason())
	o.breakerWait = again
	return true
}

// breakerAgain bounds a wait for circuit breakers (breakerWait's wait, known
// and ok) by the job's deadline: again is how long the job waits before it
// is run again (0: it does not wait), and why, when it does not although only
// breakers refuse it, says so for its failure.
func (o *orchestrator) breakerAgain(wait time.Duration, known, byBreakers bool) (again time.Duration, why string) {
	deadline := o.route.Deadline
	switch left, _ := o.deadlineLeft(); {
	case !byBreakers:
		return 0, ""
	case deadline <= 0:
		return wait, ""
	case left <= 0:
		return 0, "the job's deadline of " + deadline.String() + " passed while it waited for a circuit breaker to admit it"
	case known && wait >= left:
		// Waiting would only fail it later for the same reason.
		return 0, "no circuit breaker refusing it admits an attempt before the job's deadline of " + deadline.String() +
			" (the first in " + wait.Round(time.Millisecond).String() + ", " + left.Round(time.Millisecond).String() + " left)"
	default:
		return min(wait, left), ""
	}
}

// refusedRouting is the routing of a plan that no target admitted (Plan):
// the decisions as the peek made them, each eligible target that was not
// admitted now ineligible with why — its breaker's refusal, or the
// conformance gate's — as routing would have said had the peek seen it. A
// gate's refusal is in the decisions already (gateDecision); a breaker's is
// among the reasons, "<target>: skipped: <why>" (choose), of which routing
// gives the why, and carries its cause (CauseBreaker): every ineligible
// decision does. A target already used (a resumed round) whose breaker
// refused it is not among breakerRefused (which names targets not yet used)
// but was noted (breakerNoted); one used whose reason is only its attempt's
// failure was not refused admission, and its decision stays as it was.
func (o *orchestrator) refusedRouting() json.RawMessage {
	decisions := make([]Decision, 0, len(o.decisions))
	for _, d := range o.decisions {
		if d.Event != "" {
			continue
		}
		if why, ok := o.reasons[d.Provider]; ok && d.Eligible && o.refusedByBreaker(d.Provider) {
			d.Eligible = false
			// "<target>: skipped: <why>", or for a target used, "<target>:
			// <its failure>; not retried: <why>": a decision's reason does
			// not name its target.
			d.Reason = strings.TrimPrefix(strings.TrimPrefix(why, d.Provider+": skipped: "), d.Provider+": ")
			d.Cause = CauseBreaker
		}
		decisions = append(decisions, d)
	}
	return appendDecisions(nil, decisions)
}

// refusedByBreaker says whether provider's breaker refused the attempt this
// run chose for it (choose): as a target not yet used (breakerRefused), or,
// for one already used in the round, as noted in routing (breakerNoted).
func (o *orchestrator) refusedByBreaker(provider string) bool {
	if _, ok := o.breakerRefused[provider]; ok {
		return true
	}
	return o.used[provider] && o.breakerNoted[provider]
}
