package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// JobHoldingKey returns owner's job that holds key for operation while the
// key is live (not expired), when the request that claimed it had fingerprint
// fp; ErrKeyReused when the key holds another request's job; ErrNotFound when
// no live key. It is a plain read: a key row another transaction is still
// inserting (a claim committing) is not seen, and not waited for; a caller
// about to answer "nothing was done" uses AwaitJobHoldingKey.
func (s *Store) JobHoldingKey(ctx context.Context, owner, operation, key string, fp []byte) (*Job, error) {
	var jobID string
	var held []byte
	err := s.pool.QueryRow(ctx, jobHoldingKeySQL, owner, operation, key).Scan(&jobID, &held)
	return s.jobHoldingKey(ctx, owner, jobID, held, fp, err)
}

// AwaitJobHoldingKey is JobHoldingKey once no transaction is still writing
// the key's row (awaitKeyWrites). It serves replays of requests that this
// replica can no longer turn into a job (their prompt version or route is
// gone after a deploy), so that a retry still reaches its job: the claim
// itself answers every other replay in the batch that creates jobs, and waits
// for another claim of the key still committing (the key's unique index);
// this look-up, before a final 422, must wait for it too, or the caller reads
// "not done" for the job that commits a moment later. A row still held past
// the wait is ErrBusy (a *BusyError naming the key): the outcome is not known.
func (s *Store) AwaitJobHoldingKey(ctx context.Context, owner, operation, key string, fp []byte) (*Job, error) {
	var jobID string
	var held []byte
	err := s.awaitKeyWrites(ctx, owner, operation, key, jobHoldingKeySQL, &jobID, &held)
	return s.jobHoldingKey(ctx, owner, jobID, held, fp, err)
}

// AwaitKeyHeld is KeyHeld once no transaction is still writing the key's row
// (awaitKeyWrites): for a request refused a new job (no provider eligible, its
// input too long for every target), whose answer says nothing was stored,
// while another replica's claim of the key may be committing. A row still
// held past the wait is ErrBusy (a *BusyError naming the key).
func (s *Store) AwaitKeyHeld(ctx context.Context, owner, operation, key string) (bool, error) {
	var held bool
	err := s.awaitKeyWrites(ctx, owner, operation, key, keyHeldSQL, &held)
	return held, err
}

// jobHoldingKeySQL reads the live key row of (owner $1, operation $2, key $3).
const jobHoldingKeySQL = `SELECT job_id::text, fingerprint FROM idempotency_keys
	WHERE owner = $1 AND operation = $2 AND idempotency_key = $3 AND (expires_at IS NULL OR expires_at > now())`

// keyHeldSQL says whether (owner $1, operation $2, key $3) is bound to a job
// whose retention has not passed (KeyHeld's question).
const keyHeldSQL = `SELECT EXISTS (SELECT 1 FROM idempotency_keys
	WHERE owner = $1 AND operation = $2 AND idempotency_key = $3 AND (expires_at IS NULL OR expires_at > now()))`

// jobHoldingKey is JobHoldingKey's answer from its read of the key row (err,
// jobID and the fingerprint held).
func (s *Store) jobHoldingKey(ctx context.Context, owner, jobID string, held, fp []byte, err error) (*Job, error) {
	if err != nil {
		return nil, notFound(err)
	}
	if !bytes.Equal(held, fp) {
		return nil, ErrKeyReused
	}
	return s.GetJob(ctx, owner, jobID)
}

// noJobID is the job a key row names in awaitKeyWrites's insert
// (awaitClaimKeySQL), which is rolled back unchecked: none (the foreign key's
// check is deferred to a commit that never comes).
const noJobID = "00000000-0000-0000-0000-000000000000"

// awaitKeyWrites runs read (a query of one row, given owner, operation and
// key as $1..$3) into dest once no other transaction is writing the key's
// row — a claim still committing, on this replica or another, a take-over or
// rebind of the key — as the lost claim's hand-over waits (awaitClaimKey): an
// insert of the key (awaitClaimKeySQL, naming noJobID) waits on the unique index for an
// in-progress insert or update of it to commit or abort, in a transaction
// rolled back at once; the read after it, on the same connection, sees what
// that writer left. Two round trips, on rejection paths only (the read is a
// statement of its own, as the plain look-ups').
//
// The wait goes as a claim's does, an item found blocked going alone, but
// the first try only probes: on a connection of the pool, with the shortest
// lock wait (keyProbeWait, a millisecond), taking no alone turn — the common
// case, no writer of the key, ends there, answered at once however many
// claims wait alone. A row held then makes the look-up a claim's own wait: it
// takes one of the claims' alone turns (runAlone: each waiter holds a pool
// connection) and waits up to aloneLockWait; a key found held so, by a look-up
// or a claim (heldKeys), is looked up alone at once, with no probe, while it
// is remembered. So look-ups of a held key hold at most the alone turns'
// connections, each probe a millisecond. (Every refusal's look-up took a
// turn, and a storm of them — every breaker open, no provider eligible for
// anyone — used up the claims' turns: the refusals were answered 503 busy
// instead of their own answer, and a claim of a key genuinely held waited for
// a turn behind them; and a first try that waited the batches' 100 ms, with
// no turn, let resends of one held key take the whole pool: both found in
// review.) Past the alone wait, or with no turn, the error is a *BusyError
// naming the key (ErrBusy): the read did not run, and whether a job holds the
// key is not known yet.
func (s *Store) awaitKeyWrites(ctx context.Context, owner, operation, key, read string, dest ...any) error {
	return s.awaitWrites(ctx, fmt.Sprintf("Idempotency-Key %q of operation %q", key, operation),
		keyOf(owner, operation, key), // as claims remember it
		func(ctx context.Context, wait time.Duration) error {
			return s.readAfterKeyWrites(ctx, wait, owner, operation, key, read, dest...)
		})
}

// awaitWrites is awaitKeyWrites's wait for any row a refusal's look-up must
// see unwritten (the key's, or a job's: AwaitRetryKeyHeld): try, the look-up
// waiting up to wait for the row's writers, runs first as a probe
// (keyProbeWait, no alone turn) unless the row is remembered held under
// remember (heldKeys), then, only if the row was held, once more in one of
// the claims' alone turns with aloneLockWait, which marks or forgets it held.
// Still held past that, or with no turn, the error is a *BusyError naming
// what.
func (s *Store) awaitWrites(ctx context.Context, what, remember string, try func(ctx context.Context, wait time.Duration) error) error {
	var err error
	if !s.paths.held.has(remember) {
		tctx, cancel := context.WithTimeout(ctx, execTimeout+keyProbeWait)
		err = try(tctx, keyProbeWait)
		cancel()
		if err == nil || !Busy(err) {
			return err
		}
	}
	turnErr := s.runAlone(ctx, &s.alone, nil, func(ctx context.Context, wait time.Duration) {
		err = try(ctx, wait)
	})
	switch {
	case turnErr != nil:
		err = turnErr // nothing learnt: the memory is left as it is
	case Busy(err):
		s.paths.held.mark(remember)
	case err == nil:
		s.paths.held.forget(remember)
	}
	if err != nil && Busy(err) {
		return &BusyError{Wait: aloneLockWait(), Err: err, What: what}
	}
	return err
}

// keyProbeWait is the lock wait of awaitKeyWrites's first try: it tells a
// key some transaction is writing from one nobody is, without waiting for the
// writer on a connection no alone turn bounds.
const keyProbeWait = time.Millisecond

// readAfterKeyWrites is one try of awaitKeyWrites, waiting up to wait.
func (s *Store) readAfterKeyWrites(ctx context.Context, wait time.Duration, owner, operation, key, read string, dest ...any) error {
	conn, err := s.acquireBatchConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(lockWaitSQL, lockWaitArg(wait))
	b.Queue(awaitClaimKeySQL, owner, operation, key, noJobID, []byte{})
	b.Queue(`ROLLBACK`)
	err = conn.SendBatch(ctx, b).Close()
	if conn.Conn().PgConn().TxStatus() != 'I' && !conn.Conn().IsClosed() {
		// The wait failed inside the transaction (lock_not_available), and
		// the rest of the batch was skipped: end it, or the pool drops the
		// connection on its release.
		_, _ = conn.Exec(ctx, `ROLLBACK`)
	}
	if err != nil && !unclaimable(err) {
		return err
	}
	return conn.QueryRow(ctx, read, owner, operation, key).Scan(dest...)
}

// unclaimable reports whether err, the wait's insert of a key row, says that
// no such row can be stored (program_limit_exceeded, class 54: a key or
// prompt name too long for the key's index; a data exception, class 22): no
// claim can be writing it either, and the read answers for it as it would
// have without the wait (no row, or the same refusal of the data).
func unclaimable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "54") || strings.HasPrefix(pgErr.Code, "22"))
}
