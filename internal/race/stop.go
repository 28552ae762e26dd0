package race

import (
	"context"
	"slices"
	"time"
)

// defaultStopGrace is Config.StopGrace's default: enough for a job run cut
// by the shutdown to record its attempts' ends (shutdownRecordFor) and its
// own (exitWriteFor), each bounded, when another transaction holds no row
// they need for long.
const defaultStopGrace = 10 * time.Second

// exitWriteFor bounds each write that ends a job run — its settlement, the
// release of its lease, the hand-over of an attempt never sent — on top of
// the store's own lock wait for them (a few seconds): a job row another
// transaction holds (an operator's transaction left open in psql, a replica
// cut off mid-transaction) must not hold the run, and the runner's Stop
// behind it, for as long as it is held. A write that gives up leaves the job
// to its lease: once the run has ended the lease is no longer renewed, it
// expires, and recovery takes the job over.
const exitWriteFor = 5 * time.Second

// hardStopWait is how long Stop still waits for the job runs once it has
// cancelled their writes (awaitRuns): a run whose provider's adapter ignores
// its context is not waited for.
const hardStopWait = time.Second

// detached is ctx without its cancellation, for the writes that record what
// an attempt or a job did whatever happened to the run (a cancellation, a
// deadline, the shutdown's cut); it is cancelled only when Stop gives up
// waiting for the job runs (awaitRuns). Call end when done with it.
func (r *Runner) detached(ctx context.Context) (c context.Context, end func()) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if r.hard == nil { // a Runner not made by New (tests)
		return c, cancel
	}
	stop := context.AfterFunc(r.hard, cancel)
	return c, func() { stop(); cancel() }
}

// exitContext is detached, bounded by exitWriteFor: the context of a write
// that ends a job run.
func (r *Runner) exitContext(ctx context.Context) (context.Context, func()) {
	c, end := r.detached(ctx)
	c, cancel := context.WithTimeout(c, exitWriteFor)
	return c, func() { cancel(); end() }
}

// awaitRuns waits, after the shutdown's cut, for the job runs to end (done)
// for up to StopGrace. Past it the runs still going are logged, their
// database writes are cancelled (detached), and after a last short wait
// (hardStopWait) Stop goes on without them: their jobs are left to their
// leases, which the stopped lease keeper no longer renews.
func (r *Runner) awaitRuns(done <-chan struct{}) {
	grace := time.NewTimer(r.cfg.StopGrace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-r.hard.Done():
		// Another Stop (the drain's, whose grace began first) gave up on
		// the runs: this one shares its last wait rather than wait out a
		// grace of its own and log the same runs again.
		r.awaitGiveUp(done)
		return
	case <-grace.C:
	}
	if !r.givingUp.CompareAndSwap(false, true) {
		// Another Stop's grace ended as this one's did: it gives up on the
		// runs (once, logged once), and this one shares its last wait.
		r.awaitGiveUp(done)
		return
	}
	r.cfg.Log.Error("job runs still going after the attempts in flight were cut; cancelling their database writes and leaving the jobs to their leases (recovery takes them over once they expire)",
		"jobs", r.runningIDs(), "waited", r.cfg.StopGrace)
	r.cancelHard()
	last := time.NewTimer(hardStopWait)
	defer last.Stop()
	select {
	case <-done:
	case <-last.C:
		r.cfg.Log.Error("job runs still going after their writes were cancelled (a provider adapter that ignores its context?); stopping without them",
			"jobs", r.runningIDs())
	}
	r.gaveUpOnce.Do(func() { close(r.gaveUp) })
}

// awaitGiveUp waits, in a Stop after another one cancelled the runs' writes
// (hard), until the runs have ended (done) or that Stop has given up on them
// after its last wait (gaveUp), so that no Stop returns while a run may
// still be recording its end.
func (r *Runner) awaitGiveUp(done <-chan struct{}) {
	select {
	case <-done:
	case <-r.gaveUp:
	}
}

// runningIDs lists the jobs this process runs, sorted.
func (r *Runner) runningIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.running))
	for id := range r.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
