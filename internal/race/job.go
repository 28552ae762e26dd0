package race

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/routerhq/router/internal/store"
)

// runJob orchestrates a job while holding its lease: it derives what has been
// tried from the database, then starts, hedges, retries and fails over attempts
// until one wins or nothing is left to try.
//
// fresh, when not nil, is the job as this process just created it, already
// holding its lease: it is neither taken nor read again.
func (r *Runner) runJob(ctx context.Context, jobID string, fresh *store.Job) {
	log := r.cfg.Log.With("job_id", jobID)
	if fresh == nil {
		ok, err := r.cfg.Store.AcquireJobLease(ctx, jobID, r.cfg.LeaseOwner, r.cfg.Lease)
		if err != nil || !ok {
			if err != nil && ctx.Err() == nil {
				log.Error("could not take the job's lease", "err", err)
			}
			return
		}
	}
	defer func() {
		if err := r.cfg.Store.ReleaseJobLease(context.WithoutCancel(ctx), jobID, r.cfg.LeaseOwner); err != nil {
			log.Warn("could not release the job's lease", "err", err)
		}
	}()
	stopLease := r.keepLease(ctx, jobID, log)
	defer stopLease()

	job := fresh
	if job == nil {
		var err error
		if job, err = r.cfg.Store.GetJobAny(ctx, jobID); err != nil {
			log.Error("could not read job", "err", err)
			return
		}
	}
	if job.State != store.JobPending && job.State != store.JobRunning {
		return
	}
	log = log.With("owner", job.Owner, "operation", job.Operation)
	o, reason := r.prepare(ctx, job, log)
	if o == nil {
		if _, err := r.cfg.Store.SettleJob(context.WithoutCancel(ctx), job.ID, reason); err != nil {
			log.Error("could not record job failure", "err", err)
		}
		log.Warn("job failed before any attempt", "reason", reason)
		return
	}
	if r.cfg.Listener != nil {
		changed, unsubscribe := r.cfg.Listener.Subscribe(job.ID)
		defer unsubscribe()
		go r.watchCancel(ctx, job.ID, changed, !o.route.KeepLosers)
	}
	o.run(ctx)
}

// prepare loads what the orchestrator needs; a nil orchestrator comes with the
// reason the job cannot run.
func (r *Runner) prepare(ctx context.Context, job *store.Job, log *slog.Logger) (*orchestrator, string) {
	route, ok := r.cfg.Routes[job.Route]
	if !ok {
		return nil, "route " + job.Route + " is no longer configured"
	}
	sp, err := r.specFor(job, route)
	if err != nil {
		return nil, err.Error()
	}
	decisions := r.decide(route, sp)
	routing, _ := json.Marshal(decisions)
	o := &orchestrator{
		r: r, job: job, spec: sp, route: route, log: log, routing: routing, decisions: decisions,
		results: make(chan attemptResult), retries: map[string]int{}, used: map[string]bool{},
		inflight: map[string]context.CancelCauseFunc{}, reasons: map[string]string{},
	}
	var why []string
	for _, d := range decisions {
		if d.Eligible {
			o.candidates = append(o.candidates, d.Provider)
		} else {
			why = append(why, d.Provider+": "+d.Reason)
		}
	}
	if len(o.candidates) == 0 {
		if err := r.cfg.Store.SetRouting(ctx, job.ID, routing); err != nil {
			log.Error("could not record routing", "err", err)
		}
		return nil, "no eligible provider on route " + job.Route + " (" + strings.Join(why, "; ") + ")"
	}
	// Resume: providers already tried in this round (since the caller's last
	// retry) are not tried again.
	for _, a := range job.Attempts {
		if a.Seq > job.AttemptBase {
			o.used[a.Provider] = true
			o.attempts++
			if why := failureOf(a); why != "" {
				o.reasons[a.Provider] = a.Provider + ": " + why
			}
		}
	}
	return o, ""
}

// watchCancel cancels this process's work on a job when the database says the
// job was cancelled (by any replica), or, unless the route keeps losers
// running, completed.
func (r *Runner) watchCancel(ctx context.Context, jobID string, changed <-chan struct{}, cancelLosers bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			state, err := r.cfg.Store.JobStateAny(ctx, jobID)
			switch {
			case err != nil:
				if ctx.Err() == nil {
					r.cfg.Log.Warn("could not read job state", "job_id", jobID, "err", err)
				}
			case state == store.JobCancelled:
				r.cancelWith(jobID, errJobCancelled)
				return
			case state == store.JobSucceeded && cancelLosers:
				// Completed elsewhere (a resolution, another replica): in-flight
				// attempts can no longer win (SPEC §6.6).
				r.cancelWith(jobID, errLoser)
				return
			}
		}
	}
}

// keepLease renews the job's lease and its in-flight attempts' leases at a
// third of their length until stopped.
func (r *Runner) keepLease(ctx context.Context, jobID string, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(r.cfg.Lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := r.cfg.Store.RenewLeases(ctx, jobID, r.cfg.LeaseOwner, r.cfg.Lease); err != nil && ctx.Err() == nil {
					log.Warn("could not renew leases", "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// failureOf is why an earlier attempt did not win, from its stored error, so a
// resumed race can still explain a failure in full.
func failureOf(a store.Attempt) string {
	if a.State != store.AttemptFailed && a.State != store.AttemptInvalid || len(a.Error) == 0 {
		return ""
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(a.Error, &e) != nil {
		return ""
	}
	return e.Message
}
