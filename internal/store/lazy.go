package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// lazyCommitSQL, queued first in a pipeline of statements sent with one
// Sync (one transaction) or right after BEGIN (execLazy), makes that
// transaction's commit not wait for the WAL flush.
const lazyCommitSQL = `SELECT set_config('synchronous_commit', 'off', true)`

// execLazy runs one statement in its own transaction with synchronous_commit
// off, in one round trip: the commit does not wait for the WAL flush. It is
// for bookkeeping whose loss in a database crash is harmless because recovery
// covers it (an attempt marked running, a lease taken, renewed or released, the
// routing explanation) — never for a claim, an attempt row or a winner.
func (s *Store) execLazy(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return s.execLazyWaiting(ctx, 0, sql, args...)
}

// execLazyWaiting is execLazy with the statement's lock waits bounded by
// wait (lock_timeout; 0 leaves them as they are), in the same round trip: a
// row another transaction holds for longer fails the statement (Busy), and
// nothing changes.
func (s *Store) execLazyWaiting(ctx context.Context, wait time.Duration, sql string, args ...any) (pgconn.CommandTag, error) {
	return s.execLazyPipeline(ctx, wait, "", sql, args...)
}

// execLazyJobLocked is execLazyWaiting that first locks the row of job jobID
// (FOR NO KEY UPDATE: the lock an UPDATE of the row takes anyway) by a
// statement of its own, in the same transaction and the same round trip. sql
// then reads with a snapshot taken once the lock is held: every transaction
// that held the row before (a CreateAttempt) has committed and is seen. One
// statement is not enough when its condition reads other tables (the job's
// attempts): it reads them on the snapshot of its start, taken before it
// waited for the row, and PostgreSQL's re-check of a row it waited for does
// not read other tables again (ClaimOrphans has the same two steps).
func (s *Store) execLazyJobLocked(ctx context.Context, wait time.Duration, jobID, sql string, args ...any) (pgconn.CommandTag, error) {
	return s.execLazyPipeline(ctx, wait, jobID, sql, args...)
}

// execLazyPipeline is execLazyWaiting, with job lockJob's row locked first
// unless lockJob is "" (execLazyJobLocked).
func (s *Store) execLazyPipeline(ctx context.Context, wait time.Duration, lockJob, sql string, args ...any) (pgconn.CommandTag, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(lazyCommitSQL)
	if wait > 0 {
		b.Queue(lockWaitSQL, lockWaitArg(wait))
	}
	if lockJob != "" {
		b.Queue(`SELECT FROM jobs WHERE id = $1 FOR NO KEY UPDATE`, lockJob)
	}
	b.Queue(sql, args...)
	stmt := b.Len() - 1
	b.Queue("COMMIT")
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var tag pgconn.CommandTag
	for i := range b.Len() {
		t, err := br.Exec()
		if err != nil {
			return tag, err // the pool discards a connection left in a transaction
		}
		if i == stmt {
			tag = t
		}
	}
	return tag, nil
}
