package race

import (
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// A deployment's replicas may run different configurations for a while: a
// rolling update that bumps a prompt's version or adds, renames or removes a
// route. A job handed over by a replica of one version (a drain, a crash, a
// caller's retry sent to another replica) may then reach a replica that
// cannot run it. Such a replica leaves the job to one that can — it does not
// adopt it in its recovery pass (store.Runnable), and gives back the lease of
// one it was handed — until the job's current run has lasted
// Config.HandoverWait on the database clock; then it fails it with the reason,
// so that a job no replica can run does not stay pending for ever.

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
// routes (stored without a prompt version).
func (r *Runner) runnable() *store.Runnable {
	can := &store.Runnable{Routes: make([]string, 0, len(r.cfg.Routes)), After: r.cfg.HandoverWait}
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
