package race

import (
	"time"

	"github.com/routerhq/router/internal/store"
)

// Drain starts the runner's shutdown (SPEC §17): no new job is taken (recovery
// claims nothing more), no retry or failover starts, and pending retries are
// dropped. budget is the drain's (shutdown.drain): how long attempts in
// flight are given to finish, from now (Stop's context ends then; 0: no
// budget is known, and no hedge starts either). The one
// attempt that may still start is a hedge on a silent attempt whose
// first-byte deadline — its target's first_byte_timeout (else timeout), or
// what is left of the job's deadline if less — ends before the drain does
// (drainFits): without it, a job whose
// primary went silent would end `unknown` only because the process was told
// to stop. A hedge keeps the hedge budget's rules. Attempts in flight go on;
// when a job has nothing in flight and its race is not over, its orchestration
// ends without settling it and releases its lease, so another replica takes
// it over at its next recovery pass instead of waiting for the lease to
// expire (handOver). Call Stop after it.
func (r *Runner) Drain(budget time.Duration) {
	r.drainOnce.Do(func() {
		if budget > 0 {
			r.drainEnd.Store(time.Now().Add(budget).UnixNano())
		}
		r.mu.Lock()
		r.stopping = true
		r.stopLater()
		r.mu.Unlock()
		r.draining.Store(true)
		close(r.drained)
	})
}

// drainSignal is the drain channel until the orchestrator has acted on it
// (seen), then nil, so a select acts on the drain once.
func (r *Runner) drainSignal(seen bool) <-chan struct{} {
	if seen {
		return nil
	}
	return r.drained
}

// drainFits says whether an attempt on target started at from may start
// although the runner drains: its outcome must be known before the drain
// budget runs out — by then it has either stayed silent past its first-byte
// deadline (unknown by its provider's silence, not by the stop) or begun
// answering, and an answer the drain cuts is recorded failed (attemptResult
// of errShutdown) and the job handed over. That deadline is the target's
// first-byte budget, or what is left then of the job's deadline if less.
// With the default drain (the longest timeout) and first_byte_timeout at
// most half of timeout, a hedge due in the drain's first half fits. True
// when the runner does not drain.
func (o *orchestrator) drainFits(target string, from time.Time) bool {
	if !o.r.draining.Load() {
		return true
	}
	end := o.r.drainEnd.Load()
	t := o.r.cfg.Targets[target]
	budget := t.firstByteBudget()
	if end == 0 || budget <= 0 {
		return false
	}
	if !o.deadlineAt.IsZero() {
		budget = min(budget, o.deadlineAt.Sub(from))
	}
	return !from.Add(budget).After(time.Unix(0, end))
}

// mayStartWhileDraining says whether an attempt of role on target may start
// now while the runner drains: a hedge that fits the drain (drainFits). A
// retry or failover would hand the job on to another call this process may
// not see to its end; the job is handed over instead.
func (o *orchestrator) mayStartWhileDraining(target, role string) bool {
	return role == store.RoleHedge && o.drainFits(target, time.Now())
}

// handOver: the race ends only because the runner drains — the job is neither
// won, stopped nor blocked, and something is left to try (a retry the drain
// dropped, an attempt it did not send, or a target not yet tried) — so it is
// left for another replica, not settled. A job with nothing left to try is
// settled as usual (failed), not handed over unsettled.
func (o *orchestrator) handOver() bool {
	if !o.r.draining.Load() || o.stopped || o.blocked {
		return false
	}
	if !o.leftOver && o.next() == "" {
		return false
	}
	o.log.Info("shutting down: handing the job over to another replica")
	return true
}
