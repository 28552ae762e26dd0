package race

import (
	"context"
	"slices"
	"strconv"
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
	// to renew the job's leases at once (holdLease). Whichever pass takes the
	// job (the woken one, a tick's, a retry's) renews it waiting for its rows
	// (renewUrgent), and when that fails, at once skipping held rows, as a
	// tick does (keepLeases: one job's held row fails the waiting renewal of
	// every job sent with it); the mark is cleared once the waiting renewal
	// succeeded or the skipping one renewed every row of the job (it did not
	// miss it: store.Renewal.Missed), or when urgentTries tries missed it
	// (urgentFailed counts them): the ticks then renew the job as any other.
	urgent       bool
	urgentFailed int
	// renewed are the job's attempts whose leases the lease keeper renewed,
	// each with this process's clock read just before the renewal that last
	// did was sent (noteRenewed); nil until one was. An attempt's send is
	// checked against it (leaseRanOut).
	renewed map[string]time.Time
	// abandoned are the job's attempts whose runs abandoned them to their
	// leases' expiry (abandonLease): the keeper no longer renews them.
	abandoned []string
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
// stops. The attempts their runs abandoned (abandonLease) are not renewed.
func (r *Runner) keepLeases() {
	every := r.cfg.Lease / 3
	r.mu.Lock()
	next := r.nextRenewal // set by the submit that started the keeper
	r.mu.Unlock()
	tick := time.NewTimer(time.Until(next))
	defer tick.Stop()
	ticks := tick.C
	if r.keeperTicks != nil {
		ticks = r.keeperTicks // a test's ticks (keeperTicks)
	}
	// retry wakes the keeper again for urgent jobs whose renewal failed, a
	// third of a tick after that renewal was sent (renewUrgent): however
	// fast a dead database refuses them, one each third of a tick at most,
	// urgentTries a job.
	retry := time.NewTimer(every)
	retry.Stop()
	defer retry.Stop()
	for {
		var now time.Time
		urgentOnly := false
		select {
		case <-r.base.Done():
			r.mu.Lock()
			r.keeping = false
			r.mu.Unlock()
			return
		case t := <-ticks:
			// The next tick comes a tick after this one, while this one's
			// renewal runs, as a ticker's would (leasesDue records when).
			now = time.Now()
			if r.keeperTicks != nil {
				now = t // a test's tick says when it comes
			}
			tick.Reset(every)
		case <-r.wakeKeeper:
			now, urgentOnly = time.Now(), true
		case <-retry.C:
			now, urgentOnly = time.Now(), true
		}
		due, urgent, live := r.leasesDue(now, every, urgentOnly)
		if !live {
			return
		}
		abandoned := r.abandonedLeases()
		// The urgent jobs first, whichever pass this is: their leases run
		// out before the next tick's renewal would come.
		if len(urgent) > 0 {
			sent, err := r.renewUrgent(urgent, abandoned, every)
			switch {
			case err == nil || r.base.Err() != nil:
				// Done, or stopping: a retry armed by an earlier
				// failure would only wake the keeper for an empty pass.
				retry.Stop()
			default:
				// The waiting statement renewed none of them: one held
				// row (an open transaction on one job's attempt) fails it
				// for all the jobs sent with it. Renew them at once as a
				// tick does, skipping held rows, so that every job whose
				// rows nobody holds has its leases before they run out;
				// the waiting retries go on only for the jobs that
				// renewal missed (a row held, or the renewal failed).
				var missed []string
				if urgentOnly {
					missed = r.renewSkipping(urgent, abandoned, every/3, r.urgentNext(urgent))
				} else {
					due = append(due, urgent...)
					slices.Sort(due)
					missed = r.renewSkipping(due, abandoned, every, "the next tick")
					due = nil
				}
				if retryAt := r.urgentMissed(urgent, missed, sent, every, err); retryAt.IsZero() {
					retry.Stop()
				} else {
					retry.Reset(time.Until(retryAt))
				}
			}
		}
		if len(due) > 0 {
			// One tick at most: a renewal on a connection gone silent (no
			// refusal, no answer) would otherwise hold every later one back
			// until all the replica's leases lapsed. The next tick tries again.
			r.renewSkipping(due, abandoned, every, "the next tick")
		}
		if r.keeperPassed != nil {
			r.keeperPassed()
		}
	}
}

// renewSkipping renews the leases of the jobs ids, skipping rows another
// transaction holds and the attempts abandoned (store.RenewLeases), given
// budget; again says, in the warning a failure logs, when the next try comes.
// missed are the jobs of ids it did not renew every row of (a held row: the
// renewal's store.Renewal.Missed), all of them if it failed.
func (r *Runner) renewSkipping(ids, abandoned []string, budget time.Duration, again string) (missed []string) {
	ctx, cancel := context.WithTimeout(r.base, budget)
	sent := time.Now() // before the statement that sets the leases from its now()
	renewal, err := r.cfg.Store.RenewLeases(ctx, r.cfg.LeaseOwner, ids, abandoned, r.cfg.Lease)
	cancel()
	if err != nil {
		if r.base.Err() == nil {
			// err names the wait that ran out: the connection's dial, or
			// the statement's answer (store.RenewLeases).
			r.cfg.Log.Warn("could not renew leases; "+again+" tries again", "jobs", len(ids), "budget", budget, "err", err)
		}
		return ids
	}
	r.noteRenewed(sent, renewal.Attempts, nil)
	return renewal.Missed
}

// urgentTries is how many waiting renewals an urgent job is given
// (renewUrgent): the first and three more, a tick's worth.
const urgentTries = 4

// renewUrgent renews the leases of the urgent jobs ids (holdLease), but for
// the attempts abandoned: these cannot wait for the next tick, so a row
// another transaction holds (a moment, as an attempt is created) is waited
// for, not skipped (store.RenewLeasesWaiting) — for a third of a tick at
// most, as every other job's renewal waits behind it. err is nil when the
// renewal was done; only then are the jobs' urgent marks cleared here (a
// statement that waited for every row skipped none: an attempt it did not
// renew is no longer this process's or no longer in flight). Otherwise the
// keeper renews them at once skipping held rows, and urgentMissed keeps the
// mark of those that renewal missed, to be tried again a third of a tick
// after sent.
func (r *Runner) renewUrgent(ids, abandoned []string, every time.Duration) (sent time.Time, err error) {
	ctx, cancel := context.WithTimeout(r.base, every/3)
	defer cancel()
	sent = time.Now() // before the statement that sets the leases from its now()
	renewal, err := r.cfg.Store.RenewLeasesWaiting(ctx, r.cfg.LeaseOwner, ids, abandoned, r.cfg.Lease)
	if err == nil {
		r.noteRenewed(sent, renewal.Attempts, ids)
	}
	return sent, err
}

// urgentMissed handles the urgent jobs ids after their waiting renewal, sent
// at sent, failed with err, and a renewal skipping held rows that followed
// missed the jobs missed: a job it did not miss had every row renewed, and
// loses its mark as after a waiting renewal that succeeded; a missed one has
// the failure counted (noteUrgentFailed). retryAt, a third of a tick after
// sent, is when the keeper wakes to try the missed jobs again; zero when
// none is left to try.
func (r *Runner) urgentMissed(ids, missed []string, sent time.Time, every time.Duration, err error) (retryAt time.Time) {
	var renewed, failed []string
	for _, id := range ids {
		if slices.Contains(missed, id) {
			failed = append(failed, id)
		} else {
			renewed = append(renewed, id)
		}
	}
	r.noteRenewed(sent, nil, renewed)
	again, given := r.noteUrgentFailed(failed)
	// err names the wait that ran out: the connection's dial, or the
	// statement's answer (a row held longer than the budget).
	if again > 0 {
		retryAt = sent.Add(every / 3)
		r.cfg.Log.Warn("could not renew the leases of jobs whose claim answered late; trying again a third of a tick after the last try",
			"jobs", again, "budget", every/3, "retry_in", max(0, time.Until(retryAt)), "err", err)
	}
	if given > 0 {
		r.cfg.Log.Warn("could not renew the leases of jobs whose claim answered late, in "+strconv.Itoa(urgentTries)+" tries; the ticks renew them as any other",
			"jobs", given, "budget", every/3, "err", err)
	}
	return retryAt
}

// urgentNext says, in the warning of a failed renewal of the urgent jobs ids
// after their waiting renewal failed, when the next try comes: a waiting one
// if any of them has tries left after this failure, else the next tick.
func (r *Runner) urgentNext(ids []string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if rj, ok := r.running[id]; ok && rj.urgent && rj.urgentFailed+1 < urgentTries {
			return "the next waiting try, a third of a tick after the last,"
		}
	}
	return "the next tick"
}

// abandonLease stops the lease keeper renewing the lease of attempt
// attemptID of job jobID: its run abandoned it (its end could not be
// recorded), to the lease's expiry and recovery, which marks it unknown.
// Renewed with its job's until the whole run ended (its siblings in flight
// may run on for long), it would be taken over that much later.
func (r *Runner) abandonLease(jobID, attemptID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rj, ok := r.running[jobID]; ok {
		rj.abandoned = append(rj.abandoned, attemptID)
		r.running[jobID] = rj
	}
}

// abandonedLeases lists the attempts of the running jobs whose leases the
// keeper no longer renews (abandonLease); nil when there are none.
func (r *Runner) abandonedLeases() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rj := range r.running {
		out = append(out, rj.abandoned...)
	}
	return out
}

// noteUrgentFailed counts a failed urgent renewal against the jobs ids
// (runningJob.urgentFailed) and takes the mark of those that had their
// urgentTries: again jobs are left to try, given jobs were given up.
func (r *Runner) noteUrgentFailed(ids []string) (again, given int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		rj, ok := r.running[id]
		if !ok || !rj.urgent {
			continue // its run has ended
		}
		rj.urgentFailed++
		if rj.urgentFailed >= urgentTries {
			rj.urgent = false
			given++
		} else {
			again++
		}
		r.running[id] = rj
	}
	return again, given
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
// late: holdLease) is marked urgent: every pass, a tick's or one the keeper
// was woken for (urgentOnly, which renews only such jobs), lists it in
// urgent, to be renewed at once waiting for rows another transaction holds
// rather than skipping them (renewUrgent); due holds the others. The mark
// stays until such a renewal, or the skipping one after it, renewed the job,
// or urgentTries of them missed it. Most jobs end well within a tick and
// so never cost a renewal, nor hold row locks that a win would wait for. live
// is false when no job is left, and the keeper stops.
func (r *Runner) leasesDue(now time.Time, every time.Duration, urgentOnly bool) (due, urgent []string, live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.running) == 0 {
		r.keeping = false
		return nil, nil, false
	}
	if !urgentOnly {
		r.nextRenewal = now.Add(every)
	}
	for id, rj := range r.running {
		switch {
		case rj.urgent:
			urgent = append(urgent, id)
		case !urgentOnly && now.Sub(rj.since) >= every/3:
			due = append(due, id)
		}
	}
	slices.Sort(due)
	slices.Sort(urgent)
	return due, urgent, true
}

// noteRenewed records, for the attempts a renewal sent at sent renewed, that
// their leases hold until at least sent plus the lease on this process's
// clock (runningJob.renewed): an attempt whose run stalled before its send,
// its lease kept by the keeper meanwhile, is sent (leaseRanOut). An attempt
// the renewal skipped (a row another transaction held) keeps the time it had.
// The jobs urgent, renewed by renewUrgent, lose their urgent marks. (A job
// is held once while it runs, and only a fresh one is marked, so a mark is
// never one set after the renewal was sent.)
func (r *Runner) noteRenewed(sent time.Time, renewed []store.RenewedAttempt, urgent []string) {
	if len(renewed) == 0 && len(urgent) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range urgent {
		if rj, ok := r.running[id]; ok && rj.urgent {
			rj.urgent = false
			r.running[id] = rj
		}
	}
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
