package race

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
