package race

import (
	"context"
	"slices"
	"time"

	"github.com/routerhq/router/internal/store"
)

// runningJob is a job this process runs: how to stop it, and since when its
// lease has been held (this process's clock, read no later than the database
// set the job's lease: for a job created here, just before its claim
// statement was sent, store.Job.LeaseSentAt; for any other, after its
// adoption or lease answered).
type runningJob struct {
	cancel context.CancelCauseFunc
	since  time.Time
	// urgent: the keeper's next tick would come more than a tick and a third
	// after since (a claim whose answer came late), so the keeper was woken
	// to renew the job's leases at once (holdLease); cleared by the renewal
	// pass that takes the job.
	urgent bool
	// renewed are the job's attempts whose leases the lease keeper renewed,
	// each with this process's clock read just before the renewal that last
	// did was sent (noteRenewed); nil until one was. An attempt's send is
	// checked against it (leaseRanOut).
	renewed map[string]time.Time
}

// holdLease records jobID as run here, its lease set at since, and makes
// sure the lease keeper renews it in time: it starts the keeper if none runs,
// and wakes it when its next tick would come more than a tick and a third
// after since. That happens only when the statement that set the lease
// answered more than a third of a tick late (a slow COMMIT, a claim retried
// over a fail-over, a stall before the submit): the job's lease was then
// counted from the claim, not from this submit, and would otherwise be first
// renewed after it ran out. A job whose claim answered promptly costs nothing
// here but a map entry: no goroutine, no statement. Called with r.mu held.
func (r *Runner) holdLease(jobID string, cancel context.CancelCauseFunc, since time.Time) {
	every := r.cfg.Lease / 3
	if !r.keeping {
		r.keeping = true
		r.nextRenewal = time.Now().Add(every)
		r.keeperWG.Go(r.keepLeases)
	}
	urgent := r.nextRenewal.Sub(since) > every+every/3
	r.running[jobID] = runningJob{cancel: cancel, since: since, urgent: urgent}
	if urgent {
		select {
		case r.wakeKeeper <- struct{}{}:
		default: // a wake is pending already: its pass takes this job too
		}
	}
}

// keepLeases renews, once per tick (a third of the lease), the orchestration
// leases of the jobs this process runs and the leases of their in-flight
// attempts, in one statement for all of them: the cost of holding leases grows
// with ticks, not with jobs. Woken between ticks (holdLease), it renews at
// once only the jobs that could not wait for the next tick, and keeps its
// ticks. It runs while jobs run and ends when none is left or the runner
// stops.
func (r *Runner) keepLeases() {
	every := r.cfg.Lease / 3
	r.mu.Lock()
	next := r.nextRenewal // set by the submit that started the keeper
	r.mu.Unlock()
	tick := time.NewTimer(time.Until(next))
	defer tick.Stop()
	for {
		var now time.Time
		urgentOnly := false
		select {
		case <-r.base.Done():
			r.mu.Lock()
			r.keeping = false
			r.mu.Unlock()
			return
		case <-tick.C:
			// The next tick comes a tick after this one, while this one's
			// renewal runs, as a ticker's would (leasesDue records when).
			now = time.Now()
			tick.Reset(every)
		case <-r.wakeKeeper:
			now, urgentOnly = time.Now(), true
		}
		ids, live := r.leasesDue(now, every, urgentOnly)
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
		renew := r.cfg.Store.RenewLeases
		if urgentOnly {
			// These jobs cannot wait for the next tick: a row another
			// transaction holds (a moment, as an attempt is created) is
			// waited for, not skipped — for a third of a tick at most, as
			// every other job's renewal waits behind it.
			cancel()
			ctx, cancel = context.WithTimeout(r.base, every/3)
			renew = r.cfg.Store.RenewLeasesWaiting
		}
		sent := time.Now() // before the statement that sets the leases from its now()
		renewed, err := renew(ctx, r.cfg.LeaseOwner, ids, r.cfg.Lease)
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
// whose leases the pass at now renews. A tick (urgentOnly false) renews those
// whose leases were set a third of a tick or more ago, and records when the
// next tick comes (Runner.nextRenewal). A younger job's lease was set less
// than a third of a tick ago, with the whole lease (three ticks) ahead; the
// next tick renews it, at most a tick and a third after it was set, so with a
// tick and two thirds to spare (two thirds of a tick if that tick also
// skipped its row because a win held it: renewals skip locked rows). A job
// for which the next tick would come later than that (its claim answered
// late: holdLease) is marked urgent, and a pass the keeper was woken for
// (urgentOnly) renews only such jobs, at once, waiting for rows another
// transaction holds rather than skipping them (store.RenewLeasesWaiting). Most jobs end well within a
// tick and so never cost a renewal, nor hold row locks that a win would wait
// for. live is false when no job is left, and the keeper stops.
func (r *Runner) leasesDue(now time.Time, every time.Duration, urgentOnly bool) (ids []string, live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.running) == 0 {
		r.keeping = false
		return nil, false
	}
	if !urgentOnly {
		r.nextRenewal = now.Add(every)
	}
	for id, rj := range r.running {
		if rj.urgent || !urgentOnly && now.Sub(rj.since) >= every/3 {
			ids = append(ids, id)
			if rj.urgent {
				rj.urgent = false
				r.running[id] = rj
			}
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
