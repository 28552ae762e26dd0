package race

import (
	"context"
	"fmt"

	"github.com/routerhq/router/internal/store"
)

// unconfiguredWarning is the warning about an unknown attempt on a target
// the recovery leader does not configure (warnUnconfigured).
const unconfiguredWarning = "reconcile: an unknown attempt is on a target this router does not configure, so reconciliation " +
	"never looks it up (warned once); its job stays unknown until the attempt is resolved. It resolves itself once the " +
	"leader configures that target again with a provider that can look requests up, if the attempt's request was sent " +
	"with lookup (its provider's supports_lookup on when it was sent); otherwise only an operator ends it: resolve the attempt failed or succeeded (POST /v1/jobs/{id}/attempts/{seq}/resolve with the owner's key; " +
	"failed drops whatever the provider did, and the job goes on to its next target) or cancel the job " +
	"(POST /v1/jobs/{id}/cancel); docs/operations.md"

// warnUnconfigured warns, once per attempt, about the unknown attempts (older
// than execution.reconcile_after, of jobs not ended) on targets this router
// does not configure: reconcile looks up only the attempts on configured
// targets, so a job whose unknown attempt is on a target a deploy removed
// stayed unknown with nothing saying why. Such an attempt is listed again on
// every pass (the warning names the job, the attempt and its target, and the
// resolve call), but warned about once while this reconciler lives (the
// process's RunRecovery), as an answer that cannot be judged is
// (firstNoSpec): a warning a pass for ever, per attempt, would bury the
// logs.
func (r *Runner) warnUnconfigured(ctx context.Context, batch int, rec *reconciler) {
	names := make([]string, 0, len(r.cfg.Targets))
	for name := range r.cfg.Targets {
		names = append(names, name)
	}
	limit := batch + rec.warnedUnconfigured()
	pass, cancel := context.WithTimeout(ctx, passTimeout)
	off, err := r.cfg.Store.ListUnknownAttemptsOff(pass, names, r.cfg.ReconcileAfter, limit)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Log.Error("reconcile: could not list unknown attempts on targets this router does not configure", "err", err)
		}
		return
	}
	for _, u := range rec.firstUnconfigured(off, len(off) < limit) {
		r.cfg.Log.Warn(unconfiguredWarning, "job_id", u.JobID, "attempt_id", u.AttemptID, "seq", u.Seq, "target", u.Provider,
			"resolve", fmt.Sprintf("POST /v1/jobs/%s/attempts/%d/resolve", u.JobID, u.Seq))
	}
}

// warnedUnconfigured is how many attempts on unconfigured targets rec has
// warned about: a listing holds that many more, so that those already
// warned about, listed first (the oldest), cannot crowd newer ones out.
func (rc *reconciler) warnedUnconfigured() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.unconfigured)
}

// firstUnconfigured returns the attempts of listed not warned about yet, and
// remembers them. When the listing is complete (not cut by its limit), it
// forgets the attempts no longer in it (resolved, or their job ended), so
// that what it remembers stays bounded by the attempts still waiting.
func (rc *reconciler) firstUnconfigured(listed []store.UnknownAttempt, complete bool) []store.UnknownAttempt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var first []store.UnknownAttempt
	for _, u := range listed {
		if !rc.unconfigured[u.AttemptID] {
			rc.unconfigured[u.AttemptID] = true
			first = append(first, u)
		}
	}
	if complete && len(rc.unconfigured) > len(listed) {
		in := make(map[string]bool, len(listed))
		for _, u := range listed {
			in[u.AttemptID] = true
		}
		for id := range rc.unconfigured {
			if !in[id] {
				delete(rc.unconfigured, id)
			}
		}
	}
	return first
}
