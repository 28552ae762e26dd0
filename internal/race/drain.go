package race

import (
	"context"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Drain starts the runner's shutdown (SPEC §17): no new job is taken (recovery
// claims nothing more), no new attempt starts — no hedge, retry or failover —
// and pending retries are dropped. Attempts in flight go on; when a job has
// nothing in flight and has not ended, its orchestration ends without settling
// it and releases its lease, so another replica takes it over at its next
// recovery pass instead of waiting for the lease to expire. Call Stop after it.
func (r *Runner) Drain() {
	r.drainOnce.Do(func() {
		r.mu.Lock()
		r.stopping = true
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

// handOver: the race ends only because the runner drains — the job is neither
// won, stopped nor blocked — so it is left for another replica, not settled.
func (o *orchestrator) handOver() bool {
	if !o.r.draining.Load() || o.stopped || o.blocked {
		return false
	}
	o.log.Info("shutting down: handing the job over to another replica")
	return true
}

// handOverNew hands over a job this process created (holding its lease) but
// will not run because it is stopping, so another replica takes it at once: a
// first attempt created with it (when the plan was made just before the
// drain) was never sent and is recorded so, rather than left to expire as
// unknown; then the job's lease is released. Called with r.mu held; fresh and
// plan may be nil.
func (r *Runner) handOverNew(fresh *store.Job, plan *Plan) {
	defer plan.Discard()
	if fresh == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if plan.First() != nil && len(fresh.Attempts) == 1 {
		if err := r.cfg.Store.FinishAttempt(ctx, fresh.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptCancelled,
			Error: map[string]any{"kind": "not_sent", "fault": "router", "message": "the request was never sent: this router was shutting down"}}); err != nil {
			r.cfg.Log.Warn("could not record an unsent first attempt while stopping; its lease will expire", "job_id", fresh.ID, "err", err)
		}
	}
	if err := r.cfg.Store.ReleaseJobLease(ctx, fresh.ID, r.cfg.LeaseOwner); err != nil {
		r.cfg.Log.Warn("could not hand a new job over while stopping; its lease will expire", "job_id", fresh.ID, "err", err)
	}
}
