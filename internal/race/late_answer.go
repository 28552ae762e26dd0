package race

import (
	"context"
	"encoding/json"
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

// committedWin says whether the win of attempt a, whose offer
// (store.OfferCompletion) failed, committed nevertheless: the job, read back
// within exitWriteFor, is succeeded, completed by a, and not by a
// resolution of a (whose settlement is the resolver's to count). The store
// reads back once itself, but gives up with an error when the database stays
// unreachable through its tries; the attempt was then abandoned without its
// usage, and no process counted the job's settlement — recovery finds it
// succeeded and counts nothing. Reporting it as this run's win (rather than
// counting the settlement here) keeps one place that counts a run's win
// (the orchestrator's handling of a won result) and ends the race as a win
// does; the win stored the attempt's usage, so the metrics count it too.
// Any read error keeps the attempt abandoned, as before: the lease expires
// and recovery decides.
func (r *Runner) committedWin(bg context.Context, job *store.Job, a *store.Attempt, log *slog.Logger) bool {
	ctx, cancel := context.WithTimeout(bg, exitWriteFor)
	defer cancel()
	j, err := r.cfg.Store.GetJobAny(ctx, job.ID)
	if err != nil || j.State != store.JobSucceeded || j.CompletedBy == nil || *j.CompletedBy != a.ID {
		return false
	}
	for _, at := range j.Attempts {
		if at.ID == a.ID && resolved(at.Error) {
			return false
		}
	}
	log.Warn("the completion's answer was lost, but its win had committed: counted as this run's win")
	return true
}

// resolved says whether an attempt's stored error carries a resolution (an
// operator's or reconciliation's verdict, store.ResolveAttempt).
func resolved(detail json.RawMessage) bool {
	var e struct {
		Resolution json.RawMessage `json:"resolution"`
	}
	return len(detail) > 0 && json.Unmarshal(detail, &e) == nil && len(e.Resolution) > 0
}
