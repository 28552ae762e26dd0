package race

import (
	"slices"
	"time"
)

// keepLeases renews, once per tick (a third of the lease), the orchestration
// leases of every job this process runs and the leases of their in-flight
// attempts, in one statement for all of them: the cost of holding leases grows
// with ticks, not with jobs. It runs while jobs run and ends when none is left
// or the runner stops.
func (r *Runner) keepLeases() {
	tick := time.NewTicker(r.cfg.Lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-r.base.Done():
			r.mu.Lock()
			r.keeping = false
			r.mu.Unlock()
			return
		case <-tick.C:
		}
		r.mu.Lock()
		if len(r.running) == 0 {
			r.keeping = false
			r.mu.Unlock()
			return
		}
		ids := make([]string, 0, len(r.running))
		for id := range r.running {
			ids = append(ids, id)
		}
		r.mu.Unlock()
		slices.Sort(ids) // lock order: the same in every batch
		if err := r.cfg.Store.RenewLeases(r.base, r.cfg.LeaseOwner, ids, r.cfg.Lease); err != nil && r.base.Err() == nil {
			r.cfg.Log.Warn("could not renew leases", "jobs", len(ids), "err", err)
		}
	}
}
