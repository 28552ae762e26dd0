package race

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/routerhq/router/internal/store"
)

// runJob runs a job's first attempt on the first eligible provider of its route.
func (r *Runner) runJob(ctx context.Context, job *store.Job) {
	log := r.cfg.Log.With("job_id", job.ID, "owner", job.Owner, "operation", job.Operation)
	fail := func(reason string) {
		if _, err := r.cfg.Store.SettleJob(context.WithoutCancel(ctx), job.ID, reason); err != nil {
			log.Error("could not record job failure", "err", err)
		}
		log.Warn("job failed before any attempt", "reason", reason)
	}
	p, err := r.cfg.Prompts.Get(job.Operation, job.PromptVersion)
	if err != nil {
		fail("the prompt is no longer loaded: " + err.Error())
		return
	}
	msgs, err := p.Render(job.Input)
	if err != nil {
		fail("the prompt cannot be rendered: " + err.Error())
		return
	}
	route, ok := r.cfg.Routes[job.Route]
	if !ok {
		fail("route " + job.Route + " is no longer configured")
		return
	}
	if r.cfg.Listener != nil {
		changed, unsubscribe := r.cfg.Listener.Subscribe(job.ID)
		defer unsubscribe()
		go r.watchCancel(ctx, job.ID, changed)
	}
	decisions := r.decide(route, p, msgs)
	if b, err := json.Marshal(decisions); err == nil {
		if err := r.cfg.Store.SetRouting(ctx, job.ID, b); err != nil {
			log.Error("could not record routing", "err", err)
		}
	}
	var pick *Decision
	var reasons []string
	for i := range decisions {
		if decisions[i].Eligible {
			pick = &decisions[i]
			break
		}
		reasons = append(reasons, decisions[i].Provider+": "+decisions[i].Reason)
	}
	if pick == nil {
		fail("no eligible provider on route " + job.Route + " (" + strings.Join(reasons, "; ") + ")")
		return
	}
	target := r.cfg.Targets[pick.Provider]
	model := target.Model
	if p.Model != "" {
		model = p.Model
	}
	attempt, err := r.cfg.Store.CreateAttempt(ctx, store.NewAttempt{
		JobID: job.ID, Provider: pick.Provider, Model: model, Role: store.RolePrimary,
		LeaseOwner: r.cfg.LeaseOwner, LeaseFor: r.cfg.Lease,
		MaxInflight: route.MaxInflight, MaxAttempts: route.MaxAttempts,
	})
	switch {
	case errors.Is(err, store.ErrJobFinished), errors.Is(err, store.ErrAttemptBlocked), errors.Is(err, store.ErrAttemptLimit):
		log.Info("job takes no new attempt", "reason", err)
		return
	case err != nil:
		if ctx.Err() == nil {
			log.Error("could not create attempt", "err", err)
		}
		return
	}
	out := r.runAttempt(ctx, job, attempt, target, p, msgs)
	if out.settle {
		if _, err := r.cfg.Store.SettleJob(context.WithoutCancel(ctx), job.ID, out.reason); err != nil {
			log.Error("could not settle job", "err", err)
		}
	}
}

// watchCancel cancels this process's work on a job when the database says the
// job was cancelled (by any replica).
func (r *Runner) watchCancel(ctx context.Context, jobID string, changed <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			j, err := r.cfg.Store.GetJobAny(ctx, jobID)
			if err == nil && j.State == store.JobCancelled {
				r.Cancel(jobID)
				return
			}
		}
	}
}
