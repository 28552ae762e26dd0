package race

import "strings"

// A deferred target is one that routing found ineligible only because its
// circuit breaker refused it (byBreaker: decideRefusals) — an open breaker, a
// half-open one whose probe is in flight — which clears by itself. It is kept
// among the candidates (newOrchestrator) so that a later failover, hedge or
// retry asks its breaker again (choose) rather than drop it for the whole
// run; a race left with nothing in flight and such targets to try waits for
// them (waitForBreakers). It does not count as eligible for the plan's "no
// eligible provider" (anyEligible), and the first choice skips it (Plan).
// A race none of whose targets was refused at the plan does no more work.

// deferred says whether candidate p is refused by its breaker since routing
// decided, not yet admitted in this run.
func (o *orchestrator) deferred(p string) bool {
	_, ok := o.byBreaker[p]
	return ok
}

// anyEligible says whether routing found any target eligible: a candidate
// that is neither deferred nor refused at the plan because the gate could
// not read its results (unreadAtPlan).
func (o *orchestrator) anyEligible() bool {
	return len(o.candidates) > len(o.byBreaker)+len(o.unreadAtPlan)
}

// deferredSet is the deferred targets, and those the gate refused at the plan
// because it could not read their results, as a skip set (nextExcept): the
// first choice asks again none that routing just saw refused. Nil when there
// is none.
func (o *orchestrator) deferredSet() map[string]bool {
	if len(o.byBreaker)+len(o.unreadAtPlan) == 0 {
		return nil
	}
	skip := make(map[string]bool, len(o.byBreaker)+len(o.unreadAtPlan))
	for p := range o.byBreaker {
		skip[p] = true
	}
	for p := range o.unreadAtPlan {
		skip[p] = true
	}
	return skip
}

// gateUnread says whether decision d is the conformance gate's refusal only
// because it could not read the target's results (GateUnread), which clears
// by itself once the database answers.
func gateUnread(d Decision) bool {
	return d.Cause == CauseConformanceGate && strings.HasPrefix(d.Reason, GateUnread)
}

// admitDeferred acts on the admission of deferred target p by its breaker:
// it is deferred no more, and its decision becomes eligible in the job's
// routing, as routing would decide now. The routing goes with the attempt
// about to be created (o.routing: in the same statement), not in a write of
// its own.
func (o *orchestrator) admitDeferred(p string) {
	delete(o.byBreaker, p)
	delete(o.breakerNoted, p) // a later refusal (its retry's) is noted afresh
	d := o.decisionOf(p)
	if d == nil || d.Eligible || d.Cause != CauseBreaker {
		return
	}
	d.Eligible, d.Reason, d.Cause = true, "", ""
	o.routing = appendDecisions(nil, o.decisions)
}

// noteDeferred gives each deferred target not tried in the round, with no
// reason yet, its breaker's refusal as its reason, as choose says of one it
// skips: a failed job's error names every target and why it was not used.
func (o *orchestrator) noteDeferred() {
	for p := range o.byBreaker {
		if _, has := o.reasons[p]; has || o.used[p] {
			continue
		}
		if d := o.decisionOf(p); d != nil && !d.Eligible && d.Cause == CauseBreaker {
			o.reasons[p] = p + ": skipped: " + d.Reason
		}
	}
}

// pendingDeferred says whether a deferred target not tried in the round is
// still refused only by its breaker (not since skipped by the conformance
// gate): one the race may wait for.
func (o *orchestrator) pendingDeferred(p string) bool {
	if o.used[p] {
		return false
	}
	d := o.decisionOf(p)
	return d != nil && !d.Eligible && d.Cause == CauseBreaker
}
