package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrBusy: another transaction holds a row the change needs — an idempotency
// key's, a job's — and did not release it within the store's bounded wait for
// it (lock_timeout). PostgreSQL cancelled the statement and rolled its
// transaction back: the change wrote nothing, and the same request can be sent
// again shortly (with the same Idempotency-Key). The holder is usually brief
// (a concurrent request with the same key, a cancellation, a retry, a
// resolution); one that lasts is an operator's transaction left open in psql,
// or the transaction of a replica that lost its connection mid-way, whose locks
// PostgreSQL keeps until it notices the client is gone
// (idle_in_transaction_session_timeout, tcp_keepalives_*). The error (a
// *BusyError) says which row.
var ErrBusy = errors.New("another transaction holds a row this change needs")

// BusyError is ErrBusy, saying what is held.
type BusyError struct {
	// What is the row held, as the caller knows it: Idempotency-Key "k" of
	// operation "triage"; job 0196….
	What string
	Wait time.Duration // how long the change waited for it; 0: it did not wait (Error says none)
	Err  error         // PostgreSQL's error (lock_not_available), when there is one
}

func (e *BusyError) Error() string {
	if e.Wait <= 0 {
		// Not a lock wait that ran out (a claim never run for itself:
		// claimOutcome).
		return e.What + " is held by another transaction"
	}
	return fmt.Sprintf("%s is held by another transaction, which did not release it within %s", e.What, e.Wait)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

func (e *BusyError) Unwrap() error { return e.Err }

// Busy reports whether err is ErrBusy or PostgreSQL's lock_not_available
// (55P03: a lock wait that ran into lock_timeout): a row another transaction
// holds, not a fault of the request, of the router or of the database's
// reachability (Unavailable is false for it). A caller answers it as a
// condition to retry shortly.
func Busy(err error) bool {
	if errors.Is(err, ErrBusy) {
		return true
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgerrcode.LockNotAvailable
}

// lockWaitSQL is the statement that bounds the rest of its transaction's lock
// waits to d (set_config('lock_timeout', $1, true) with $1 = lockWaitArg(d)).
const lockWaitSQL = `SELECT set_config('lock_timeout', $1, true)`

// lockWaitArg is d as lock_timeout takes it: whole milliseconds, at least 1
// (0 would mean no limit).
func lockWaitArg(d time.Duration) string {
	return fmt.Sprintf("%dms", max(d.Milliseconds(), 1))
}

// lockWaitQueryRow is tx.QueryRow(ctx, sql, args...) with tx's lock waits
// bounded to wait (lockWaitSQL) first, both sent in one batch: the bound costs
// no round trip of its own ahead of the transaction's first row lock (every
// round trip of a job's path is counted against it, docs/performance.md). The
// row's Scan reports what QueryRow's would — pgx.ErrNoRows for no row, the
// lock wait's lock_not_available — or the bound's own error, ahead of them.
// Its Scan must be called, as it releases the batch (and the transaction's
// connection) for the next statement.
func lockWaitQueryRow(ctx context.Context, tx pgx.Tx, wait time.Duration, sql string, args ...any) pgx.Row {
	b := &pgx.Batch{}
	b.Queue(lockWaitSQL, lockWaitArg(wait))
	b.Queue(sql, args...)
	return lockWaitRow{br: tx.SendBatch(ctx, b)}
}

// lockWaitRow is the row of lockWaitQueryRow's query, read from its batch.
type lockWaitRow struct{ br pgx.BatchResults }

func (r lockWaitRow) Scan(dest ...any) error {
	_, err := r.br.Exec()
	if err == nil {
		err = r.br.QueryRow().Scan(dest...)
	}
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// transitionLockWait bounds how long the job's transitions off the success
// path's batches wait for a row another transaction holds (lock_timeout): a
// valid answer that came late (OfferCompletion's late path: a job already
// won, cancelled, or settled otherwise), an attempt's other ends
// (FinishAttempt: a loser, a failure, an answer never sent), a hedge,
// failover or retry (CreateAttempt), a cancellation (CancelJob) and a routing
// record (SetRouting). Their usual waits are a concurrent transaction's
// milliseconds; a row held for longer — an operator's transaction left open
// in psql, a replica cut off in the middle of one — would otherwise hold the
// attempt's goroutine, the job's orchestration, or the API request, for as
// long as it is held. Past it the change writes nothing and the error is
// ErrBusy (a *BusyError naming the job): an attempt stays in flight and its
// lease's expiry settles it, as after any failed win; an attempt is not
// created (the race goes on with the attempts in flight, or leaves the job
// to its lease); a cancellation is answered 503 busy, to be sent again
// shortly.
const transitionLockWait = 2 * time.Second

// TransitionLockWait is transitionLockWait, for a caller that bounds a
// transition of its own the same way (Resolution.LockWait): the race's
// resolution of an attempt whose definitive failure came after recovery had
// marked it unknown.
const TransitionLockWait = transitionLockWait

// jobBusy is err, as a *BusyError naming job jobID, when it is a lock wait
// that ran into wait (lock_not_available); any other err as it is.
func jobBusy(err error, jobID string, wait time.Duration) error {
	if err != nil && Busy(err) && !errors.Is(err, ErrBusy) {
		return &BusyError{What: "job " + jobID, Wait: wait, Err: err}
	}
	return err
}
