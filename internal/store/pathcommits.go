package store

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// pathCommit is one of the two commits on a job's success path waiting for
// its batch: a key claim (CreateJob) or a win (CompleteJob). Claims and wins
// share one group, so concurrent jobs' claims and wins go out together: one
// round trip and one commit (one WAL flush) for both kinds, where separate
// groups paid one for each.
type pathCommit struct {
	claim *claimRequest
	win   *winRequest
}

// execPathCommits runs one batch: the claim statement for its claims and the
// win statement for its wins (one per job; a second valid answer for a job in
// the batch goes in a round of its own afterwards) in one transaction. If
// that fails, each kind is run again on its own, with its own retries and
// fallbacks, so a failing claim cannot fail a win or the other way round
// (both statements are safe to run again after a commit whose answer was
// lost: a claim finds its own job, a win finds itself won).
//
// Claims go first (in key order), then wins (in job id order). A win locks
// job, attempt and key rows of a job that exists; a claim locks the key rows
// it inserts and, when its key is live (a resend that attaches to a running
// job), that key's row until its batch commits (ON CONFLICT DO UPDATE … WHERE
// false keeps the row lock). So a resend in one batch and the win of its job
// in another can wait on each other; PostgreSQL's deadlock detection and the
// batch's lock_timeout (batchLockWait, batchSettingsSQL) end that wait, and
// the batch is split and run again kind by kind. A claim or a win still
// blocked on its own is run once more by its caller, alone (CreateJob,
// OfferCompletion).
func (s *Store) execPathCommits(ctx context.Context, batch []*pathCommit) {
	var claims []*claimRequest
	var wins []*winRequest
	for _, pc := range batch {
		if pc.claim != nil {
			claims = append(claims, pc.claim)
		} else {
			wins = append(wins, pc.win)
		}
	}
	switch {
	case len(wins) == 0:
		s.execClaims(ctx, claims)
		return
	case len(claims) == 0:
		s.execWins(ctx, wins)
		return
	}
	cb := groupClaims(claims)
	round, rest := winRound(wins)
	err := retryRolledBack(func() error { return s.queryBatched(ctx, batchLockWait, claimStmt(cb.firsts), s.winStmt(round)) })
	if err == nil {
		s.committed("claim", len(cb.firsts))
		s.opt.Observer.Batch("win", len(round)) // the same transaction: one commit
		if s.afterClaimCommit != nil {
			s.afterClaimCommit(cb.firsts[0].nj.IdempotencyKey)
		}
		cb.finish()
		tellWins(round)
	} else {
		markReached(cb.firsts, err)
		s.runWins(ctx, round, batchLockWait)
		tellWins(round) // committed or failed: their callers need not wait for the claims' split
		if Busy(err) {
			// A row held elsewhere failed the batch after its lock wait:
			// which claim (or win) it blocked is not known (unless it is
			// a max_live_jobs lock), and the claims run together again
			// would wait for it once more, holding up the others another
			// batchLockWait: they are split (splitClaims).
			s.splitClaims(ctx, cb.firsts, err, batchLockWait)
		} else {
			s.runClaims(ctx, cb.firsts, batchLockWait)
		}
		cb.finish()
	}
	if len(rest) > 0 {
		s.execWins(ctx, rest)
	}
}

// claimBatch is a batch of claims: the first claim of each key, in lock
// order, and the claims of a key already in the batch, which take its outcome.
type claimBatch struct {
	all, firsts, dups []*claimRequest
	byKey             map[string]*claimRequest
}

func groupClaims(batch []*claimRequest) claimBatch {
	cb := claimBatch{all: batch, firsts: make([]*claimRequest, 0, len(batch)), byKey: make(map[string]*claimRequest, len(batch))}
	for _, c := range batch {
		if f, ok := cb.byKey[c.key()]; ok {
			if f.nj.ReplayOnly && !c.nj.ReplayOnly {
				// A claim that may create its key's job goes out for the
				// key, not a replay-only one (which would leave it the
				// expired job): the replay-only claim takes its outcome.
				cb.byKey[c.key()] = c
				cb.firsts[slices.Index(cb.firsts, f)] = c
				cb.dups = append(cb.dups, f)
				continue
			}
			cb.dups = append(cb.dups, c)
			continue
		}
		cb.byKey[c.key()] = c
		cb.firsts = append(cb.firsts, c)
	}
	slices.SortFunc(cb.firsts, func(a, b *claimRequest) int { return strings.Compare(a.key(), b.key()) })
	return cb
}

// finish gives each duplicate its key's outcome and tells every caller.
func (cb claimBatch) finish() {
	for _, d := range cb.dups {
		f := cb.byKey[d.key()]
		switch {
		case f.err != nil && keyRowBusy(f.err) && !bytes.Equal(d.nj.Fingerprint, f.nj.Fingerprint):
			// The key's row is held by another transaction past the
			// claim's lock wait: this claim would wait for the same row,
			// and is told busy too (nothing of either was written). Its
			// caller runs it alone, as the key's claim's does (CreateJob),
			// and it is answered its own outcome, busy (a *BusyError
			// naming the key) if the row is still held — not sent back to
			// the batches as not run, where another request's claim of the
			// key could go out ahead of it on every try.
			d.err, d.lockWait = f.err, f.lockWait
		case f.err != nil && !bytes.Equal(d.nj.Fingerprint, f.nj.Fingerprint):
			// The key's claim failed, maybe for its own request's sake (an
			// input the database refused) and nothing of it was written:
			// this other request's outcome is unknown, and it is run again
			// alone (CreateJob).
			d.err = errClaimNotRun
		case f.err != nil:
			d.err = f.err
		case f.created:
			d.existingID, d.existingFP = f.jobID, f.nj.Fingerprint
		case f.limited:
			// The key's claim was refused by max_live_jobs: it held no job,
			// and a duplicate that may create is refused too; a replay-only
			// one finds no job (ErrReplayKeyReleased).
			d.limited = !d.nj.ReplayOnly
		default:
			d.existingID, d.existingFP = f.existingID, f.existingFP
			// No job held the key for a claim that may create (a replay-only
			// claim goes out for its key only when every claim of it is one:
			// groupClaims): a transaction claimed the key and committed
			// while the batch ran, and each duplicate reads it again, a
			// replay-only one too (claimOutcome).
			d.readAgain = f.existingID == "" && !f.nj.ReplayOnly
		}
	}
	for _, c := range cb.all {
		close(c.done)
	}
}

// keyRowBusy reports whether err, the error of a claim's statement, is its
// wait for its key's row running out (Busy), not for its owner's
// max_live_jobs lock (ErrLiveLimitBusy), which another claim of the key may
// not take. A claim that failed busy in a batch has that error from a
// statement that carried it alone (runClaims, splitClaims: a batch that
// failed otherwise than on a max_live_jobs lock is run again claim by
// claim), whose only row another transaction can hold is its key's.
func keyRowBusy(err error) bool {
	return Busy(err) && !errors.Is(err, ErrLiveLimitBusy)
}

// tellWins tells the callers of a round of wins that it has run.
func tellWins(round []*winRequest) {
	for _, w := range round {
		close(w.done)
	}
}

// winRound splits wins into a round of distinct jobs and the rest.
func winRound(batch []*winRequest) (round, rest []*winRequest) {
	seen := make(map[string]bool, len(batch))
	for _, w := range batch {
		if seen[w.c.JobID] {
			rest = append(rest, w)
			continue
		}
		seen[w.c.JobID] = true
		round = append(round, w)
	}
	return round, rest
}

// commitClock is the clock commit waits are timed by: time.Now, or a test's
// own (a try's wait is then exactly what the test says it took). A claim's
// or a win's try reads its start from it (CreateJob, OfferCompletion);
// commitWaited, the end.
var commitClock = time.Now

// committed tells the observer of a batch that committed: one durable commit,
// and size items of kind. A batch that failed is not told, nor its tries that
// the database rolled back, so router_db_durable_commits_total and
// router_db_batch_size count what committed, not what was sent (the items of
// a failed batch are counted when they commit on their own).
// Called once the commit is known and before any of the batch's callers is
// told its outcome (they are woken after the batch: done channels, or
// Listener.Publish by the caller), so a caller that learns of its commit finds
// it counted. Another replica's waiter told by NOTIFY may learn of it a moment
// before this replica counts it.
func (s *Store) committed(kind string, size int) {
	s.opt.Observer.DurableCommit()
	s.opt.Observer.Batch(kind, size)
}

// commitWaited tells the observer, if it times them, how long a claim or a
// win waited for its commit since start (queued, then its batch).
func (s *Store) commitWaited(kind string, start time.Time) {
	if s.waits != nil {
		s.waits.CommitWait(kind, commitClock().Sub(start))
	}
}
