package race

import (
	"context"
	"slices"
	"time"

	"github.com/routerhq/router/internal/store"
)

// runningJob is a job this process runs: how to stop it, and since when (this
// process's clock, read after the database set the job's lease: at its claim
// or its adoption).
type runningJob struct {
	cancel context.CancelCauseFunc
	since  time.Time
	// renewed are the job's attempts whose leases the lease keeper renewed,
	// each with this process's clock read just before the renewal that last
	// did was sent (noteRenewed); nil until one was. An attempt's send is
	// checked against it (leaseRanOut).
	renewed map[string]time.Time
}

// keepLeases renews, once per tick (a third of the lease), the orchestration
// leases of the jobs this process runs and the leases of their in-flight
// attempts, in one statement for all of them: the cost of holding leases grows
// with ticks, not with jobs. It runs while jobs run and ends when none is left
// or the runner stops.
func (r *Runner) keepLeases() {
	every := r.cfg.Lease / 3
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var now time.Time
		select {
		case <-r.base.Done():
			r.mu.Lock()
			r.keeping = false
			r.mu.Unlock()
			return
		case now = <-tick.C:
		}
		ids, live := r.leasesDue(now, every)
		if !live {
			return
		}
		if len(ids) == 0 {
			continue
		}
		// One tick at most: a renewal on a connection gone silent (no
		// refusal, no answer) would otherwise hold every later one back
		// until all the replica's leases lapsed. The next tick tries again.
		ctx, cancel := context.WithTimeout(r.base, every)
		sent := time.Now() // before the statement that sets the leases from its now()
		renewed, err := r.cfg.Store.RenewLeases(ctx, r.cfg.LeaseOwner, ids, r.cfg.Lease)
		cancel()
		if err != nil && r.base.Err() == nil {
			// err names the wait that ran out: the connection's dial, or
			// the statement's answer (store.RenewLeases).
			r.cfg.Log.Warn("could not renew leases; the next tick tries again", "jobs", len(ids), "budget", every, "err", err)
		}
		r.noteRenewed(sent, renewed)
	}
}

// leasesDue lists, in lock order (the same in every batch), the running jobs
// whose leases the tick at now renews: those that have run for a third of a
// tick or more. A younger job's lease was set less than a third of a tick
// ago, with the whole lease (three ticks) ahead; the next tick renews it, at
// most a tick and a third after it was set, so with a tick and two thirds to
// spare (two thirds of a tick if that tick also skipped its row because a win
// held it: renewals skip locked rows). Most jobs end well within a tick and so never
// cost a renewal, nor hold row locks that a win would wait for. live is false
// when no job is left, and the keeper stops.
func (r *Runner) leasesDue(now time.Time, every time.Duration) (ids []string, live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.running) == 0 {
		r.keeping = false
		return nil, false
	}
	for id, rj := range r.running {
		if now.Sub(rj.since) >= every/3 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, true
}

// noteRenewed records, for the attempts a renewal sent at sent renewed, that
// their leases hold until at least sent plus the lease on this process's
// clock (runningJob.renewed): an attempt whose run stalled before its send,
// its lease kept by the keeper meanwhile, is sent (leaseRanOut). An attempt
// the renewal skipped (a row another transaction held) keeps the time it had.
func (r *Runner) noteRenewed(sent time.Time, renewed []store.RenewedAttempt) {
	if len(renewed) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ra := range renewed {
		rj, ok := r.running[ra.JobID]
		if !ok {
			continue // its run has ended
		}
		if rj.renewed == nil {
			rj.renewed = map[string]time.Time{}
			r.running[ra.JobID] = rj
		}
		rj.renewed[ra.AttemptID] = sent
	}
}
