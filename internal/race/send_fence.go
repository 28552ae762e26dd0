package race

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/routerhq/router/internal/store"
)

// An attempt is never sent when its lease may have run out (the send fence).
// Had its router stalled (a GC pause, a frozen VM, a partition) between the
// statement that set the attempt's lease and the send for longer than the
// lease, recovery may have marked the attempt unknown (lease_expired) and
// reconciliation, counting from that expiry, may look it up while the late
// request is on its way, find no record, resolve it failed and run the job
// again: the same target would get the request twice for one intent. Sent
// before its lease runs out, the call ends (its target's timeout) before
// reconciliation may ask about it: config refuses a reconcile_after shorter
// than the longest timeout of a provider that can be asked.
//
// So each attempt carries (withLeaseSet) this process's clock read just
// before the statement that last set its lease was sent — the claim that
// created it with its job (store.Job.LeaseSentAt), or its running mark
// (store.MarkAttemptRunningFor, which renews it) — and the lease keeper notes
// each renewal of it (noteRenewed). The database set the lease from its
// now() in that statement, never before: the lease holds until at least that
// time plus the lease on this process's monotonic clock. runAttempt checks it
// just before the call (leaseRanOut): one clock read and a comparison, no
// round trip; the keeper's notes are read only when the attempt is already
// near its lease.

// leaseSetKey is the context key under which an attempt's run carries when
// this process sent the statement that set the attempt's lease
// (withLeaseSet).
type leaseSetKey struct{}

// withLeaseSet returns ctx carrying at: this process's clock (with its
// monotonic reading, time.Now) read just before it sent the statement that
// set the lease of the attempt ctx is to run. A zero at carries nothing
// (runAttempt then checks nothing: a job CreateJob did not return).
func withLeaseSet(ctx context.Context, at time.Time) context.Context {
	if at.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, leaseSetKey{}, at)
}

// leaseSendMargin is the part of the lease held back from a send: a tenth
// of it (as the leader's lease is held for nine tenths of its term:
// maintenance.Elector), at least 10ms. It covers what the check cannot see:
// the two clocks running at slightly different rates over a lease (NTP slews
// them by at most 500 ppm: 15ms over 30s) and the moment between the check
// and the call's start. The call's own length is not in it: sent while its
// lease holds, a call ends within its target's timeout, which
// reconcile_after is never shorter than.
func leaseSendMargin(lease time.Duration) time.Duration {
	return max(lease/10, 10*time.Millisecond)
}

// leaseRanOut says whether the attempt attemptID of job jobID, whose run ctx
// is, may have outlived its lease by now: its lease was last set (withLeaseSet)
// or renewed by the keeper (runningJob.renewed) at least the lease less its
// margin ago on this process's monotonic clock. held is how long ago that
// was. An attempt without the time (none was recorded) is not checked.
func (r *Runner) leaseRanOut(ctx context.Context, jobID, attemptID string) (ranOut bool, held time.Duration) {
	at, ok := ctx.Value(leaseSetKey{}).(time.Time)
	if !ok {
		return false, 0
	}
	limit := r.cfg.Lease - leaseSendMargin(r.cfg.Lease)
	if held = time.Since(at); held < limit {
		return false, held // the success path: no lock taken
	}
	r.mu.Lock()
	if renewed, ok := r.running[jobID].renewed[attemptID]; ok && renewed.After(at) {
		at = renewed
	}
	r.mu.Unlock()
	held = time.Since(at)
	return held >= limit, held
}

// leaseRanOutUnsent records an attempt that was not sent because its lease
// may have run out (leaseRanOut: held since its lease was last set) as never
// sent (store.RecordNotSentExpired: `cancelled` not_sent, counted neither as
// its target tried nor against max_attempts; recovery's mark, if it came
// first, undone). Nothing else is done here: the orchestrator decides
// (unsentPastLease) — the job's lease is this run's still, and the attempts
// beside this one go on. An attempt settled otherwise first (its job's end or
// cancellation, a resolution) is not sent either, and is not this run's to
// record. A record that fails leaves the attempt to its lease ("abandoned"):
// recovery marks it unknown, and reconciliation finds no record of it (it was
// never sent), so the job runs again.
func (r *Runner) leaseRanOutUnsent(ctx context.Context, job *store.Job, a *store.Attempt, held time.Duration, log *slog.Logger) attemptResult {
	why := fmt.Sprintf("the request was never sent: this router could not send it within the attempt's lease "+
		"(%s since the lease was set or renewed, lease %s): it stalled (a freeze, a CPU stall, a slow database answer) before sending it",
		held.Round(time.Millisecond), r.cfg.Lease)
	resumed, err := r.cfg.Store.RecordNotSentExpired(ctx, job.ID, a.ID, why)
	switch {
	case errors.Is(err, store.ErrStateConflict):
		log.Info("the attempt's lease may have run out before it was sent, and it was settled meanwhile; not sending", "err", err)
		return attemptResult{attempt: a, state: attemptUnsent, pastLease: true, held: held}
	case err != nil:
		unsentNotRecorded(log, err)
		return attemptResult{attempt: a, state: "abandoned"}
	}
	log.Warn("this router stalled past the attempt's lease before sending it; recorded as never sent",
		"held", held.Round(time.Millisecond), "lease", r.cfg.Lease, "job_resumed", resumed)
	return attemptResult{attempt: a, state: attemptUnsent, pastLease: true, resumed: resumed, held: held}
}

// maxFencedPerRun is how many attempts one run of a job may have kept from
// being sent by the send fence (unsentPastLease) before it starts no more.
// Such an attempt counts neither as its target tried nor against
// max_attempts, and is started again at once: a router whose running mark
// (or whose whole process) stays slower than nine tenths of the lease would
// otherwise create never-sent attempts until the job's deadline, or for ever
// without one.
const maxFencedPerRun = 3

// unsentPastLease acts on an attempt the send fence kept from being sent
// (leaseRanOutUnsent, res.pastLease). When its record made the job run
// again — it was unknown only because of this attempt, and is now running
// with no lease, nothing else of it in flight — this run no longer holds the
// job: it stops, starts nothing more (CreateAttempt's fencing would refuse
// it anyway) and settles nothing, and the job is submitted again, to run once
// this run ends (recovery adopts it otherwise), as expiredUnsent does.
//
// Otherwise the race goes on, the job's lease kept: other attempts of this
// run may be in flight (a hedge kept from being sent beside its primary),
// and giving the lease back under them would let another replica adopt the
// job beside them. The attempt tried nothing: its target is tried again as
// if it had not been — a retry's retry is scheduled again at once, a hedge's
// silent attempts go back on the hedge clock, any other attempt is started
// again on the next target not yet used (its own, first).
//
// Two exceptions. A drain that began after the attempt's run checked for it
// leaves the attempt to the replica that takes the job over, as an attempt
// the drain kept from being sent is (leftOver, handOver): nothing starts
// again here. And the maxFencedPerRun-th attempt kept from being sent in
// this run ends its starts (fenceGaveUp): the attempts in flight go on, and
// a race left with nothing in flight leaves the job to its lease
// (leftToLease), as a race that could not start an attempt on a held row
// does: settled, it would fail on targets never tried.
func (o *orchestrator) unsentPastLease(ctx context.Context, res attemptResult) {
	a, p := res.attempt, res.attempt.Provider
	if res.resumed {
		o.leaseLost = true
		o.stop("this router stalled past an attempt's lease before sending it; the job runs again")
		o.r.SubmitID(o.job.ID)
		return
	}
	// The attempt tried nothing: it is taken back from this round's count.
	o.attempts--
	if a.Role == store.RoleRetry {
		if o.retries[p] > 0 {
			o.retries[p]--
		}
	} else {
		delete(o.used, p)
	}
	if o.r.draining.Load() {
		o.leftOver = true // the drain began after its run checked: handed over (handOver), not settled
	}
	o.fenced++
	if o.fenced >= maxFencedPerRun && !o.fenceGaveUp {
		o.fenceGaveUp = true
		o.cancelRetry()
		o.log.Warn("the send fence kept too many attempts of this run from being sent: starting no more of them; "+
			"the attempts in flight go on, and with none left the job is left to its lease for recovery to run again. "+
			"The running mark (or this router as a whole) keeps taking nine tenths of execution.lease or more: "+
			"compare the database's round-trip latency (and this process's stalls) with execution.lease, and raise the lease or fix the database",
			"fenced", o.fenced, "lease", o.r.cfg.Lease, "held", res.held.Round(time.Millisecond))
	}
	switch a.Role {
	case store.RoleRetry:
		if o.canStart() && !o.retryPendingFor(p) {
			o.retries[p]++
			o.scheduleRetry(p, 0)
		}
		return
	case store.RoleHedge:
		now := time.Now()
		for id, f := range o.flights {
			if _, ok := o.inflight[id]; ok && f.done && !f.answering.Load() {
				f.done = false
				o.hedgeAgain(f, now)
			}
		}
		if len(o.inflight) > 0 {
			return
		}
	}
	if !o.canStart() || len(o.inflight) >= o.route.MaxInflight {
		return
	}
	if next := o.next(); next != "" {
		role := store.RoleFailover
		if o.attempts == 0 {
			role = o.r.roleOf(o.route, next)
		}
		o.start(ctx, next, role)
	}
}
