package race

import (
	"context"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// A deployment's replicas may run different configurations for a while: a
// rolling update that bumps a prompt's version or adds, renames or removes a
// route. A job handed over by a replica of one version (a drain, a crash, a
// caller's retry sent to another replica) may then reach a replica that
// cannot run it. Such a replica leaves the job to one that can — it does not
// adopt it in its recovery pass (store.Runnable), and gives back the lease of
// one it was handed — until the job has been an orphan for
// Config.HandoverWait on the database clock; then the recovery leader fails
// it with the reason (failStranded), so that a job no replica can run does not
// stay pending for ever.

// cannotRun says why this replica cannot run job at all — its route is not
// configured here, or its prompt is not loaded at the job's version — or ""
// when it can. A job that can run here may still fail to (its stored input no
// longer renders, say): that is prepare's to report.
func (r *Runner) cannotRun(job *store.Job) string {
	if _, ok := r.cfg.Routes[job.Route]; !ok {
		return "route " + job.Route + " is not configured on this replica"
	}
	if _, isChat := chat.Route(job.Operation); isChat {
		return ""
	}
	if r.cfg.Prompts == nil {
		return "no prompt is loaded on this replica (the job's is " + job.Operation + " at version " + job.PromptVersion + ")"
	}
	if _, err := r.cfg.Prompts.Get(job.Operation, job.PromptVersion); err != nil {
		return "the job's prompt is not loaded on this replica: " + err.Error()
	}
	return ""
}

// runnable is what this replica can run, for its recovery pass's adoptions:
// its routes, its prompts at their loaded versions, and chat jobs on its
// routes (stored without a prompt version). The maintenance leader adopts
// those at once, and the others once they have waited HandoverWait, to fail
// them; another replica adopts only those it can run, once they have been
// orphans for a lease — left to the leader first, it takes those the leader
// cannot run (AdoptOnce).
func (r *Runner) runnable(leader bool) *store.Runnable {
	can := &store.Runnable{Routes: make([]string, 0, len(r.cfg.Routes)), OthersAfter: r.cfg.HandoverWait}
	if !leader {
		can.OwnAfter, can.OthersAfter = r.cfg.Lease, 0
	}
	for name := range r.cfg.Routes {
		can.Routes = append(can.Routes, name)
		can.Operations = append(can.Operations, chat.Operation(name))
		can.Versions = append(can.Versions, "")
	}
	if r.cfg.Prompts != nil {
		for _, p := range r.cfg.Prompts.All() {
			can.Operations = append(can.Operations, p.Name)
			can.Versions = append(can.Versions, p.Version)
		}
	}
	return can
}

// failStranded fails a job the leader's recovery pass adopted (so it holds
// its lease) when this replica cannot run it: the pass admits such a job only
// once it has been an orphan for HandoverWait (store.Runnable.OthersAfter),
// so no replica that can run it took it meanwhile. handled is false when the
// job can run here (or could not be read): it is run as any adopted job.
func (r *Runner) failStranded(ctx context.Context, id string) (handled bool) {
	job, err := r.cfg.Store.GetJobToRun(ctx, id)
	if err != nil {
		return false // runJob reads it again and reports
	}
	why := r.cannotRun(job)
	if why == "" {
		return false
	}
	reason := why + " (no replica that can run it took it within execution.handover_wait, " + r.cfg.HandoverWait.String() + ")"
	wctx, cancel := r.exitContext(ctx)
	defer cancel()
	state, settled, err := r.cfg.Store.SettleJobAs(wctx, id, r.cfg.LeaseOwner, reason)
	if err != nil {
		r.cfg.Log.Error("recovery: could not fail a job no replica could run", "job_id", id, "err", err)
		rctx, cancel := r.exitContext(ctx)
		defer cancel()
		if rerr := r.cfg.Store.ReleaseJobLease(rctx, id, r.cfg.LeaseOwner); rerr != nil {
			r.cfg.Log.Warn("recovery: could not give back a job's lease", "job_id", id, "err", rerr)
		}
		return true
	}
	if settled { // this call ended it: one ended otherwise meanwhile is not counted again
		r.cfg.Observer.JobSettled(state)
	}
	r.cfg.Listener.Publish(id, state)
	// SettleJobAs ends the job failed, or unknown when one of its attempts'
	// outcomes is unknown: the message says which it was.
	r.cfg.Log.Warn("recovery: ended a job no replica could run", "job_id", id, "state", state, "reason", reason)
	return true
}
