package race

import (
	"cmp"
	"context"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// recordedFailure takes in a, an attempt of the round whose failure the race
// did not see live — one a resumed job ran before (prepare), or one this run
// saw end unknown that was resolved `failed` since (takeResolutions): its
// reason, and a refusal of the caller's request (refusedCaller), as refuse
// takes one, so that no target not yet tried is started (next).
func (o *orchestrator) recordedFailure(a store.Attempt) {
	if why := failureOf(a); why != "" {
		o.reasons[a.Provider] = a.Provider + ": " + why
	}
	if o.refused == "" && refusedCaller(a, o.route) {
		o.refused = cmp.Or(o.reasons[a.Provider], a.Provider+": "+string(kindOf(a)))
	}
}

// actOnRecorded goes on from the recorded failures just taken in (latest:
// each target's latest such attempt) as the live race would have after them:
// a transient failure with retries left is retried (resumeRetry), and a
// refusal of the caller's request stops the race when nothing else works on
// the request (refuse).
func (o *orchestrator) actOnRecorded(latest map[string]store.Attempt) {
	o.resumeRetry(latest)
	if o.refused != "" {
		o.refuse(o.refused)
	}
}

// takeResolutions is called when the block that an unknown attempt put on
// the job has lifted while this run is live — the store created an attempt
// it had refused, or the blocked settle found it resolved
// (store.ErrUnblocked) — because reconciliation or an operator resolved the
// attempts this run saw end unknown (o.unknowns). One read of the job: each
// resolved `failed` is acted on as a resumed race acts on it (prepare), with
// the provider's recorded error — a content-policy rejection or a bad
// request is not failed over (SPEC §6.3), a transient failure with retries
// left is retried, a rejection as too long skips the targets with no more
// room for the prompt (resolvedTooLong), and the job's reason says what the
// provider did — rather than as the timeout that made it unknown. Resolved `succeeded`, the job
// has ended: watchCancel stops the run.
func (o *orchestrator) takeResolutions(ctx context.Context) {
	o.blocked = false
	if len(o.unknowns) == 0 {
		return
	}
	rctx, cancel := o.r.exitContext(ctx)
	job, err := o.r.cfg.Store.GetJobAny(rctx, o.job.ID)
	cancel()
	if err != nil {
		o.log.Warn("could not read how the job's unknown attempts were resolved; the race goes on as if they failed", "err", err)
		return
	}
	latest := map[string]store.Attempt{}
	left := o.unknowns[:0]
	for _, id := range o.unknowns {
		for _, a := range job.Attempts {
			switch {
			case a.ID != id:
			case a.State == store.AttemptUnknown:
				left = append(left, id)
			case a.State == store.AttemptFailed:
				o.recordedFailure(a)
				latest[a.Provider] = a
				if kindOf(a) == providers.KindContextLength {
					o.resolvedTooLong(ctx, a)
				}
			}
		}
	}
	o.unknowns = left
	o.actOnRecorded(latest)
}

// resolvedTooLong acts on a resolution that says a's provider rejected the
// request as too long, as handle acts on that rejection live (and prepare on
// a resumed job's, skipTooLong): every target with no more room for the
// prompt is skipped, and with no target left the rejection refuses the
// caller's request (refuse, through actOnRecorded). An attempt created for a
// skipped target while the job was blocked is not sent (startThen).
func (o *orchestrator) resolvedTooLong(ctx context.Context, a store.Attempt) {
	if o.skipTooLongAfter(a.Provider) {
		o.recordDecisions(ctx, "the context-length skips")
	}
	if o.refused == "" && o.next() == "" {
		o.refused = cmp.Or(o.reasons[a.Provider], a.Provider+": "+string(providers.KindContextLength))
	}
}
