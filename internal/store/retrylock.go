package store

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// retryLockWaitNS is retryLockWait's value (nanoseconds): a test may lengthen
// it to watch a retry wait (SetRetryLockWait).
var retryLockWaitNS atomic.Int64

func init() { retryLockWaitNS.Store(int64(transitionLockWait)) }

// retryLockWait is the longest a retry (RetryJobKeyed) waits for a lock
// another transaction holds: the job's row, or its owner's max_live_jobs lock.
func retryLockWait() time.Duration { return time.Duration(retryLockWaitNS.Load()) }

// awaitRetryRowsSQL locks the job's row as the retry does (FOR UPDATE), and
// then its key's row as rebindKeySQL's UPDATE does (FOR NO KEY UPDATE), so it
// waits for the holders the retry would wait for, in the retry's order.
const awaitRetryRowsSQL = `WITH j AS (SELECT owner, operation, idempotency_key FROM jobs WHERE id = $1 AND owner = $2 FOR UPDATE)
	SELECT FROM idempotency_keys k, j
	WHERE k.owner = j.owner AND k.operation = j.operation AND k.idempotency_key = j.idempotency_key AND k.job_id = $1
	FOR NO KEY UPDATE OF k`

// awaitRetryRows waits up to wait until no other transaction holds owner's
// job jobID's row or its key's, in a transaction of its own that takes no
// max_live_jobs lock and writes nothing (its row locks end with it): a retry
// of a limited owner's job waits here for a held row before it takes the
// owner's lock (RetryJobKeyed). One round trip, and only on that path:
// lock_not_available when a row is still held.
func (s *Store) awaitRetryRows(ctx context.Context, owner, jobID string, wait time.Duration) error {
	return awaitUnheld(ctx, s.pool, wait, awaitRetryRowsSQL, jobID, owner)
}

// lockLiveLimitWaiting takes owner's max_live_jobs lock (liveLimitLockSQL) in
// tx, waiting up to wait for it; a wait that runs out is a
// *liveLimitBusyError. It leaves tx's lock waits bounded to wait.
func lockLiveLimitWaiting(ctx context.Context, tx pgx.Tx, owner string, wait time.Duration) error {
	b := &pgx.Batch{}
	b.Queue(lockWaitSQL, lockWaitArg(wait))
	b.Queue(liveLimitLockSQL, []string{owner})
	br := tx.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		if _, err = br.Exec(); Busy(err) {
			err = &liveLimitBusyError{wait: wait, err: err}
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// retryBusy is err, a retry's (RetryJobKeyed), as the *BusyError that says
// what was held: owner's max_live_jobs check (ErrLiveLimitBusy), or the job
// (its row or its key's, waited for up to rowWait); any other err as it is.
func retryBusy(err error, owner, jobID string, rowWait time.Duration) error {
	if be := liveLimitBusy(err, owner); be != nil {
		return be
	}
	return jobBusy(err, jobID, rowWait)
}
