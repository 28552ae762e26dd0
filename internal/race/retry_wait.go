package race

import (
	"time"
)

// retryWait is how long the race waits before a provider's n-th retry, its
// attempt having failed transiently asking for retryAfter (0: nothing asked): the backoff (capped exponential with full jitter, never
// sooner than retryAfter). ok is false, with why, when the retry is not to be
// waited for and the race fails over at once instead: retryAfter is longer
// than max_retry_after, or the retry could not start before the job's
// deadline — a timer that outlives the deadline only ends the job with the
// fallback never called. A jittered wait that would outlast the deadline when
// retryAfter does not is cut to retryAfter, the earliest the provider allows.
func (o *orchestrator) retryWait(n int, retryAfter time.Duration) (delay time.Duration, ok bool, why string) {
	if retryAfter > o.r.cfg.Backoff.MaxRetryAfter {
		return 0, false, "" // the configured bound says why (docs/configuration.md)
	}
	left, bounded := o.deadlineLeft()
	if bounded && retryAfter >= left {
		return 0, false, "not retried: its Retry-After of " + retryAfter.String() +
			" exceeds the " + left.Round(time.Millisecond).String() + " left of the job's deadline of " + o.route.Deadline.String()
	}
	delay = o.r.backoff(n, retryAfter)
	if bounded && delay >= left {
		delay = retryAfter
	}
	return delay, true, ""
}

// deadlineLeft is what is left of the job's deadline now; bounded is false
// when the route sets none. Before the race runs (prepare, which resumes a
// retry) it is the route's deadline less the run's elapsed time, as run
// counts it.
func (o *orchestrator) deadlineLeft() (left time.Duration, bounded bool) {
	switch {
	case !o.deadlineAt.IsZero():
		return time.Until(o.deadlineAt), true
	case o.route.Deadline > 0:
		return o.route.Deadline - o.job.RunElapsed, true
	}
	return 0, false
}
