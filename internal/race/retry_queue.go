package race

import (
	"context"
	"slices"
	"time"

	"github.com/routerhq/router/internal/store"
)

// pendingRetry is a retry waiting out its backoff: provider's next attempt,
// due at due.
type pendingRetry struct {
	provider string
	due      time.Time
}

// scheduleRetry puts provider's retry in the job's pending retries, due after
// delay. A race keeps one pending retry per target (SPEC §6.2: transient
// errors are retried on the same provider, bounded per provider): a target
// failing transiently while another target's retry waits out its backoff is
// retried too, instead of being failed over from with a retry left. What
// bounds them is what bounds any retry: the target's max_retries (counted as
// a retry is scheduled), the job's deadline (retryWait) and max_inflight (a
// retry due while it is reached waits for an attempt to end, ready), and the
// store's max_attempts.
func (o *orchestrator) scheduleRetry(provider string, delay time.Duration) {
	r := pendingRetry{provider: provider, due: time.Now().Add(delay)}
	i, _ := slices.BinarySearchFunc(o.pending, r, func(a, b pendingRetry) int { return a.due.Compare(b.due) })
	o.pending = slices.Insert(o.pending, i, r)
	o.armRetry()
}

// retryPending says whether a retry is waiting: for its backoff to end
// (pending), or for room to start (ready).
func (o *orchestrator) retryPending() bool {
	return len(o.pending) > 0 || len(o.ready) > 0
}

// retryPendingFor says whether provider has a retry waiting.
func (o *orchestrator) retryPendingFor(provider string) bool {
	return slices.Contains(o.ready, provider) ||
		slices.ContainsFunc(o.pending, func(r pendingRetry) bool { return r.provider == provider })
}

// retryC is the channel that says the first pending retry is due; nil (never
// ready) when none is pending.
func (o *orchestrator) retryC() <-chan time.Time {
	if len(o.pending) == 0 {
		return nil
	}
	return o.retryTimer.C
}

// armRetry sets the retry timer for the first pending retry (stops it when
// none is pending).
func (o *orchestrator) armRetry() {
	switch {
	case len(o.pending) == 0:
		if o.retryTimer != nil {
			o.retryTimer.Stop()
		}
	case o.retryTimer == nil:
		o.retryTimer = time.NewTimer(time.Until(o.pending[0].due))
	default:
		o.retryTimer.Reset(time.Until(o.pending[0].due))
	}
}

// retriesDue acts on the retry timer: each pending retry now due starts, or,
// while max_inflight is reached, waits for an attempt to end (ready). None
// starts when the race may take no other attempt (a drain may have come at
// the same time as the timer: the select picks either, and the drain's case
// finds no retry then).
func (o *orchestrator) retriesDue(ctx context.Context) {
	now := time.Now()
	n := 0
	for n < len(o.pending) && !o.pending[n].due.After(now) {
		n++
	}
	due := slices.Clone(o.pending[:n])
	o.pending = slices.Delete(o.pending, 0, n)
	o.armRetry()
	for _, r := range due {
		switch {
		case !o.canStart():
			o.retryDropped()
		case len(o.inflight) >= o.route.MaxInflight:
			o.ready = append(o.ready, r.provider) // started as soon as an attempt ends
		default:
			o.start(ctx, r.provider, store.RoleRetry) // denied by the budget, or refused by the store for now: ready (holdExtra, keepRetry)
		}
	}
}

// startReady starts the retries that came due while they could not start
// (ready), as far as max_inflight allows. One the hedge budget denies again
// goes back to ready (holdExtra), as does one the store refuses for a reason
// that passes (keepRetry); one that does not start otherwise, or no longer
// has room before the job's deadline (readyRetryFits), is dropped.
func (o *orchestrator) startReady(ctx context.Context) {
	ready := o.ready
	o.ready = nil
	for i, p := range ready {
		if len(o.inflight) >= o.route.MaxInflight {
			o.ready = append(o.ready, ready[i:]...)
			return
		}
		if !o.canStart() {
			o.retryDropped()
			continue
		}
		if !o.readyRetryFits(ctx, p, len(ready)-1-i) {
			continue // started late: too little of the deadline left for it
		}
		o.start(ctx, p, store.RoleRetry)
	}
}

// keepRetry puts provider's retry back in ready: the store refused its
// attempt for a reason that passes — an attempt of the job is unknown
// (store.ErrAttemptBlocked: SPEC §6.7, it starts once the attempt has been
// resolved) or another transaction held the job's row (store.ErrBusy). Its
// max_retries was counted as it was scheduled, so dropping it would lose it.
// It is not put back on a clock: it is tried again when an attempt ends or a
// hedge budget slot is freed (startReady), or, with nothing in flight, once
// the blocked settle finds the attempt resolved (run) — never in a loop of
// its own while the block lasts. With nothing in flight and the block still
// there, the job is settled unknown and the retry dropped (cancelRetry); a
// held row leaves the job to its lease (leftToLease), and the run that
// resumes it makes the retry (resumeRetry).
func (o *orchestrator) keepRetry(provider string) {
	switch {
	case !o.canStart():
		o.retryDropped()
	case !slices.Contains(o.ready, provider):
		o.ready = append(o.ready, provider)
	}
}

// cancelRetry drops every retry waiting: pending and ready.
func (o *orchestrator) cancelRetry() {
	o.pending, o.ready = nil, nil
	o.armRetry()
}
