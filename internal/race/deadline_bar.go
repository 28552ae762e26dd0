package race

import "time"

// deadlineBar is, for an attempt on target about to be sent, how long it must
// have waited with no response byte for a cut by the job's deadline to be
// its target's failure rather than the router's own short deadline
// (excusedByDeadline): see deadlineBarOf. Computed as the attempt is
// launched (flight.deadlineBar).
func (o *orchestrator) deadlineBar(target string) time.Duration {
	budget := o.r.cfg.Targets[target].firstByteBudget()
	if budget <= 0 || o.route.Deadline <= 0 || o.route.Deadline >= budget {
		return budget // lossBar is not asked: the rule below does not apply
	}
	return deadlineBarOf(budget, o.route.Deadline, o.lossBar(target, false))
}

// deadlineBarOf is the bar for an attempt whose target's first-byte budget
// is budget, on a route whose deadline is deadline (0: none), the target
// expected to answer within expect (lossBar: its hedge delay, or twice its
// recent p95 time to first byte when it has answered recently, capped by
// its budget; 0 when nothing says).
//
// A route whose deadline leaves room for the whole first-byte budget (or
// sets none) bars at the budget: an attempt that had it and got no byte is
// a failure, one that came too late to have it (a late hedge or failover)
// is excused. A route whose deadline is shorter than the budget gives no
// attempt but the job's opening one all the time it ever gives (failovers
// and hedges get what is left): barred at the budget, a target reached only
// that way (a fallback) could never be counted, and one that never answers
// would leave every job failed over to it unknown while its breaker stayed
// closed. There the bar is what the target is expected to answer within
// (expect), never below the floor a failover is sent with (retryFloor) nor
// above the budget: a black hole that has not answered recently is counted
// after as many jobs as a failing target, and a healthy target cut before
// it could be expected to answer (a failover sent late, a hedge cut within
// its hedge delay) is excused.
func deadlineBarOf(budget, deadline, expect time.Duration) time.Duration {
	if budget <= 0 || deadline <= 0 || deadline >= budget {
		return budget
	}
	return min(budget, max(expect, retryFloor))
}

// barAtDeadline is the attempt's deadlineBar; without a flight (an attempt
// run outside a race), its target's first-byte budget.
func (f *flight) barAtDeadline(t *Target) time.Duration {
	if f == nil {
		return t.firstByteBudget()
	}
	return f.deadlineBar
}
