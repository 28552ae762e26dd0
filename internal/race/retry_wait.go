package race

import (
	"sync/atomic"
	"time"
)

// retryFloor is the least time a retry must have, after its wait, before the
// job's deadline when its target sets no first-byte budget (no timeouts):
// less, and the deadline would most likely cut it before any response byte.
const retryFloor = time.Second

// retryWait is how long the race waits before provider p's n-th retry, its
// attempt having failed transiently asking for retryAfter (0: nothing asked):
// the backoff (capped exponential with full jitter, never sooner than
// retryAfter). ok is false, with why, when the retry is not to be waited for
// and the race fails over at once instead: retryAfter is longer than
// max_retry_after, or the retry could not start before the job's deadline —
// a timer that outlives the deadline only ends the job with the fallback
// never called.
//
// A retry that could start but would then have less than its target's
// first-byte budget (retryRoom) before the deadline is not made either while
// the route has a target left to fail over to: the deadline would most
// likely cut it before any response byte, leaving the attempt, and the job,
// unknown, with a healthy fallback never called. With none left — or none
// whose circuit breaker would admit it now — such a retry is still the job's
// only chance and is made. A jittered wait that would
// leave less than that room is cut to what leaves it (never below
// retryAfter, the earliest the provider allows).
func (o *orchestrator) retryWait(p string, n int, retryAfter time.Duration) (delay time.Duration, ok bool, why string) {
	if retryAfter > o.r.cfg.Backoff.MaxRetryAfter {
		return 0, false, "" // the configured bound says why (docs/configuration.md)
	}
	left, bounded := o.deadlineLeft()
	if bounded && retryAfter >= left {
		return 0, false, "not retried: its Retry-After of " + retryAfter.String() +
			" exceeds the " + left.Round(time.Millisecond).String() + " left of the job's deadline of " + o.route.Deadline.String()
	}
	delay = o.r.backoff(n, retryAfter)
	if !bounded {
		return delay, true, ""
	}
	room := o.retryRoom(p)
	switch {
	case left-delay >= room:
		return delay, true, ""
	case left-retryAfter >= room:
		return left - room, true, "" // at least retryAfter: the jitter is cut, not the provider's ask
	case o.fallbackAdmitsNow():
		return 0, false, "not retried: after its Retry-After of " + retryAfter.String() + " only " +
			(left - retryAfter).Round(time.Millisecond).String() + " of the job's deadline of " + o.route.Deadline.String() +
			" would be left, less than the " + room.String() + " its first byte may take"
	case delay >= left:
		delay = retryAfter // nothing to fail over to: the earliest retry is the job's best chance
	}
	return delay, true, ""
}

// retryRoom is the time a retry on provider p needs before the job's
// deadline: its target's first-byte budget (firstByteBudget), or retryFloor
// when the target sets none.
func (o *orchestrator) retryRoom(p string) time.Duration {
	if b := o.r.cfg.Targets[p].firstByteBudget(); b > 0 {
		return b
	}
	return retryFloor
}

// deadlineLeft is what is left of the job's deadline now (negative once it
// has passed); bounded is false when the route sets none. The deadline is
// fixed as the job is read (setDeadline, before prepare resumes a retry), so
// the time spent since the read — routing, the conformance gate's reads —
// counts; an orchestration whose deadline is not fixed yet has the route's
// deadline less the run's elapsed time.
func (o *orchestrator) deadlineLeft() (left time.Duration, bounded bool) {
	switch {
	case !o.deadlineAt.IsZero():
		left, bounded = time.Until(o.deadlineAt), true
	case o.route.Deadline > 0:
		left, bounded = o.route.Deadline-o.job.RunElapsed, true
	default:
		return 0, false
	}
	if f := deadlineLeftHook.Load(); f != nil {
		left = (*f)(o.job.ID, left)
	}
	return left, bounded
}

// deadlineLeftHook, set only by tests (nil otherwise), is shown what
// deadlineLeft found left of a job's (its id) deadline and returns what the
// race is to take as left: a test puts a job within the last moments of its
// deadline when it chooses, rather than racing the wall clock to get there.
var deadlineLeftHook atomic.Pointer[func(jobID string, left time.Duration) time.Duration]
