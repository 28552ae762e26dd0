package race

import (
	"context"
	"log/slog"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// notWon is the result of a valid answer whose offer did not win
// (store.OfferCompletion, Won false), reported as the database recorded its
// attempt (off.State), so that the metrics count what is stored. Only an
// answer discarded because another attempt had won the job lost a race
// (discarded false: router_races_lost_total); every other is discarded:
//
//   - lost, yet the job is not complete: it was left pending or failed with
//     the attempt in flight (store's discard records the attempt lost, race
//     event "discarded"), and nothing won it. The race goes on (handle), as
//     for a resolution's discard. The job's state is read to tell; on an
//     error the race ends, as for a race lost.
//   - won: a `succeeded` resolution (an operator's, reconciliation's) had won
//     the attempt, and completed the job, while the answer was on its way.
//     The job is complete by another hand: the race ends as for a lost race,
//     and neither the job's settlement nor a second win is counted by it.
//   - cancelled (the job was) or the state a resolution settled the attempt
//     in (kept).
func (r *Runner) notWon(ctx context.Context, job *store.Job, a *store.Attempt, off store.Offered,
	usage providers.Usage, waited time.Duration, log *slog.Logger) attemptResult {
	res := attemptResult{attempt: a, state: off.State, discarded: true, usage: usage, latency: waited}
	switch off.State {
	case store.AttemptLost:
		st, err := r.cfg.Store.JobStateAny(ctx, job.ID)
		if err != nil || store.FinalState(st) != "" {
			res.discarded = false // another attempt won: a race lost
			return res
		}
		log.Info("a valid answer came after its job was left incomplete with the attempt in flight; recorded lost, discarded", "job_state", st)
	case store.AttemptWon:
		log.Info("a valid answer came after its attempt was resolved succeeded; discarded")
	default:
		log.Info("a valid answer came after its attempt was settled otherwise; discarded", "recorded_as", off.State)
	}
	return res
}
