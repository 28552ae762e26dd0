package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// notSentRetryFor bounds how long the record of an attempt whose creation's
// answer was lost (AbandonAttempt) is tried while the database does not
// answer: a hiccup, a fail-over under way, a shutdown's last writes. Past it
// the caller gives up and the attempt's lease decides (it becomes unknown).
const notSentRetryFor = 5 * time.Second

// unsentRetryFor bounds how long a record that an attempt was never sent
// (RecordNotSent, HandOverUnsent, RecordNotSentExpired) is tried while the
// database does not answer: as long as a lost claim's hand-over. An outage
// longer than the attempt's lease lets recovery mark it unknown, and the
// record that gets through afterwards undoes that (undoExpiredUnsentLocked),
// so giving up early only leaves the job unknown for a request never sent.
// A caller that must end sooner (a shutdown's bounded writes) bounds ctx.
const unsentRetryFor = lostClaimRetryFor

// lostClaimRetryFor bounds how long a claim whose outcome was lost is handed
// over in the background (handOverLostClaim) while the database does not
// answer: past it the first attempt's lease has expired and recovery has
// settled it. A database that answers that the claim's key row is still
// being written (errClaimKeyHeld) is waited on past it.
const lostClaimRetryFor = time.Minute

// lostClaimRetryForNS is lostClaimRetryFor's value (nanoseconds): a test
// shortens it to see a hand-over outlast it (SetLostClaimRetryFor).
var lostClaimRetryForNS atomic.Int64

func init() { lostClaimRetryForNS.Store(int64(lostClaimRetryFor)) }

// tryTimeout bounds one try of a write retried while the database does not
// answer, so that a connection that hangs (no refusal, no answer) is given up
// and the next try dials again.
const tryTimeout = 5 * time.Second

// writeWhileUnreachable runs write until the database answers it — nil, or
// an error that says what the database did (a store error such as
// ErrNotFound or ErrStateConflict, or a statement's ERROR: the write is done
// or cannot be) — retrying for up to budget, with backoff from 50 ms to 2 s,
// while the answer is lost (unreachable). Only writes that are safe to run
// again may use it: each of its callers changes only rows still in the state
// it expects, so a try that committed makes the next one find nothing. An
// error in doneIfLost, after a try whose answer was lost, is that: the write
// is taken as done.
func writeWhileUnreachable(ctx context.Context, budget time.Duration, write func(context.Context) error, doneIfLost ...error) error {
	deadline := time.Now().Add(budget)
	wait := 50 * time.Millisecond
	lost := false
	for {
		tctx, cancel := context.WithTimeout(ctx, tryTimeout)
		err := write(tctx)
		cancel()
		if lost {
			for _, done := range doneIfLost {
				if errors.Is(err, done) {
					return nil
				}
			}
		}
		if !unreachable(err) || ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		lost = lost || mayHaveReached(err) // a refused connection changed nothing
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// unreachable reports whether err says nothing about what the database did:
// the connection failed, the try timed out, the session ended (FATAL). An
// error of the store's own (the rows were not as expected) or a statement's
// ERROR is an answer.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	for _, answered := range []error{ErrNotFound, ErrStateConflict, ErrLeaseLost, ErrJobFinished, ErrKeyReused,
		ErrAttemptBlocked, ErrAttemptLimit, ErrInflightLimit, ErrInvalidResult, ErrKeyRebound} {
		if errors.Is(err, answered) {
			return false
		}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
	}
	return true
}

// handOverLostClaim settles a claim that CreateJob gave up on without
// learning whether it committed (the database stopped answering after the
// batch reached it, for longer than CreateJob retries). If it committed, its
// job holds this replica's lease (and its first attempt, if any, is recorded
// `running` and was never sent), and nobody orchestrates it: its attempt would
// expire into `unknown` and wait for an operator although no provider was
// called, and a job without one would wait out the lease. So, in the
// background, once the database answers, it hands the job over
// (settleLostClaim): the attempt `cancelled` not_sent, the lease released,
// and recovery starts the job exactly once (SPEC §6.8); if the claim did not
// commit there is no job and nothing to do. It does not run the claim again:
// a claim committed now would create a job its caller was told failed.
//
// A job it settles (one whose caller sent no key, failed) is told to the
// function installed by OnLostClaimSettled, once: no caller of the store
// hears of that settlement otherwise. (A try whose answer was lost and that
// had settled it leaves the next try nothing to settle: that job is not
// told.)
//
// It does not give up while a transaction still writes the claim's key
// (errClaimKeyHeld: the database answers, and the outcome is not decided):
// that may be a try of the claim whose connection was lost while the server
// was inside its COMMIT (a synchronous standby that does not acknowledge, a
// slow fsync), which commits whenever that ends. Given up then, the job
// would land leased to this replica with its first attempt never sent, and
// become unknown at lease expiry although no provider was called. The
// database decides: each try waits for the row (lostClaimKeyWait), and the
// hand-over tries again until the writer has ended; a lease that expired
// meanwhile is undone (settleLostClaim). It ends unsettled only when
// lostClaimRetryFor passes on a try the database did not answer, or when
// ctx ends (Close, past its wait for background writes).
func (s *Store) handOverLostClaim(ctx context.Context, req *claimRequest) {
	var final string
	var settled bool
	settle := func(ctx context.Context) (err error) {
		final, settled, err = s.settleLostClaim(ctx, req)
		return err
	}
	budget := time.Duration(lostClaimRetryForNS.Load())
	err := writeWhileUnreachable(ctx, budget, settle)
	for told := false; errors.Is(err, errClaimKeyHeld) && ctx.Err() == nil; told = true {
		// Not a busy loop: a try returns errClaimKeyHeld only after
		// waiting lostClaimKeyWait for the row in the database.
		if !told {
			s.opt.Log.Warn("the key of a job whose creation's outcome was lost is still being written, perhaps by its own try still committing: "+
				"waiting for that transaction to end before handing the job over", "job_id", req.jobID, "waited", budget)
		}
		err = s.inHeldKeyTurn(ctx, func() error { return writeWhileUnreachable(ctx, budget, settle) })
	}
	if err == nil && settled {
		s.toldSettledByNoRun(final)
	}
	switch {
	case errors.Is(err, ErrNotFound):
		err = nil // the claim did not commit
	case err != nil:
		s.opt.Log.Error("could not hand over a job whose creation's outcome was lost; recovery settles it when its lease expires",
			"job_id", req.jobID, "attempt_id", req.attID, "err", err)
	default:
		s.opt.Log.Warn("settled a job whose creation's outcome was lost: it had committed",
			"job_id", req.jobID, "attempt_id", req.attID, "state", final, "handed_over", final == JobPending || final == JobRunning)
	}
	if s.onLostClaim != nil {
		s.onLostClaim(err)
	}
}

// startHandOver starts handOverLostClaim in the background (Close waits for
// it). Once Close has begun, the pool is about to close and nothing is
// started: the job, if the claim committed, is left to recovery, and that is
// logged.
func (s *Store) startHandOver(req *claimRequest) {
	what := "hand-over of job " + req.jobID + ", whose creation's outcome was lost"
	if s.bg.start(what, func(ctx context.Context) { s.handOverLostClaim(ctx, req) }) {
		return
	}
	s.opt.Log.Error("could not hand over a job whose creation's outcome was lost: the store is closed; recovery settles it when its lease expires",
		"job_id", req.jobID, "attempt_id", req.attID)
	if s.onLostClaim != nil {
		s.onLostClaim(ErrStoreClosed)
	}
}

// inHeldKeyTurn runs f, a hand-over's try past its first budget on a key row
// still held, once no other hand-over's is running. A network cut in the
// middle of a claim batch can leave the server holding every key of the
// batch (up to batchSize × maxBatchesInFlight) until its TCP keepalive ends
// the session, hours by default; each try holds a pool connection while it
// waits on the row (lostClaimKeyWait), and so many hand-overs retrying at
// once would take the pool from the jobs. One at a time, they take one.
// It gives up, with ctx's error, when ctx ends while it waits for its turn.
func (s *Store) inHeldKeyTurn(ctx context.Context, f func() error) error {
	select {
	case s.heldKeyTurn <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-s.heldKeyTurn }()
	return f()
}

// OnSettledByNoRun installs f, told the state of each job that this store
// settles outside any job run: one the background hand-over of a claim whose
// outcome was lost (handOverLostClaim) settles — a job whose caller sent no
// key, failed — and one CancelJob cancels (the run that ends after it does
// not count it: its settlement finds the job ended). The race runner
// installs its Observer's JobSettled (race.New), so that
// router_jobs_settled_total counts such a job once, as every other
// settlement is counted. Only the last f installed is told; nil removes it.
// f must not block.
func (s *Store) OnSettledByNoRun(f func(state string)) {
	if f == nil {
		s.settledByNoRun.Store(nil)
		return
	}
	s.settledByNoRun.Store(&f)
}

// toldSettledByNoRun tells OnSettledByNoRun's f, if any, of state.
func (s *Store) toldSettledByNoRun(state string) {
	if f := s.settledByNoRun.Load(); f != nil {
		(*f)(state)
	}
}

// lostClaimWhy is the message of the first attempt of a lost claim (and the
// failure of its job, when its caller sent no key).
const (
	lostClaimWhy     = "the request was never sent: the database stopped answering while the job was created, and the router that created it handed it over"
	lostClaimUnkeyed = "the request was never sent: the database stopped answering while the job was created, its caller (who sent no Idempotency-Key) was told it failed, and nothing else can reach it"
)

// settleLostClaim is one try of handOverLostClaim, in one transaction with
// the job row locked first, once no transaction is writing the claim's key
// any more (awaitClaimKey: a try may still be committing): ErrNotFound when
// the claim did not commit, else
// the job's state after it, and settled when this try moved the job out of
// pending and running (failed, for a caller without a key). Only what the
// claim left as it left it is
// changed — the first attempt while still in flight, the lease while still
// this replica's — so a try after one whose answer was lost, or after
// another replica adopted the job, changes nothing. One change of recovery's
// is undone: an outage longer than the attempt's lease lets recovery mark the
// first attempt `unknown` (lease_expired) and the job with it, but this
// replica knows the request was never sent (CreateJob failed before it could
// be), so the attempt becomes not_sent and the job runs again, as a `failed`
// resolution would make it. A job whose caller sent no key (Unkeyed) is
// failed rather than run: its caller, told that the creation failed, cannot
// reach it, and running it would pay a provider for an answer nobody reads.
// A job recovery made `unknown` and that is failed here is not settled by
// this try: it was already out of pending and running (and counted as
// `unknown` by recovery's leader), as a resolution that settles an unknown
// job is not a new settlement.
func (s *Store) settleLostClaim(ctx context.Context, req *claimRequest) (final string, settled bool, err error) {
	owner := req.nj.LeaseOwner
	why := lostClaimWhy
	if req.nj.Unkeyed {
		why = lostClaimUnkeyed
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		final, settled = "", false // a retried transaction's
		if err := awaitClaimKey(ctx, tx, req); err != nil {
			return err
		}
		var held bool
		err := tx.QueryRow(ctx, `SELECT state, coalesce(lease_owner = $2, false) FROM jobs WHERE id = $1 FOR UPDATE`,
			req.jobID, owner).Scan(&final, &held)
		if err != nil {
			return notFound(err)
		}
		expired := false // recovery made the never-sent first attempt unknown, and the job with it
		if req.attID != "" && final == JobUnknown {
			var state, kind string
			err := tx.QueryRow(ctx, `SELECT state, coalesce(error->>'kind', '') FROM attempts WHERE id = $1`, req.attID).Scan(&state, &kind)
			if err != nil {
				return notFound(err)
			}
			expired = state == AttemptUnknown && kind == "lease_expired"
		}
		if !expired && (!held || (final != JobPending && final != JobRunning)) {
			return nil // another replica adopted it, or it has ended: not this replica's any more
		}
		if expired {
			// Running without a lease (an orphan, which recovery adopts), or
			// failed for a caller without a key; unknown still while another
			// attempt is (not a lost claim's job).
			failWhy := ""
			if req.nj.Unkeyed {
				failWhy = why
			}
			if _, _, err := s.undoExpiredUnsentLocked(ctx, tx, req.jobID, req.attID, why, failWhy); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, req.jobID).Scan(&final)
		}
		if req.attID != "" {
			if _, err := cancelUnsentLocked(ctx, tx, req.jobID, req.attID, why, true); err != nil {
				return err
			}
		}
		if !req.nj.Unkeyed {
			_, err := tx.Exec(ctx, `UPDATE jobs SET lease_owner = NULL, lease_expires_at = now() WHERE id = $1`, req.jobID)
			return err
		}
		if settled, err = s.settleLocked(ctx, tx, req.jobID, why); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, req.jobID).Scan(&final)
	})
	return final, settled && err == nil, err
}

// awaitClaimKeySQL is the statement of awaitClaimKey: an insert of the
// claim's own key row that writes nothing when the key exists.
const awaitClaimKeySQL = `INSERT INTO idempotency_keys (owner, operation, idempotency_key, job_id, fingerprint)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`

// lostClaimKeyWait bounds awaitClaimKey's wait for the key's row within one
// try of settleLostClaim (shorter than tryTimeout, so that the wait, not the
// try's deadline, ends it); handOverLostClaim tries again while the row is
// held.
const lostClaimKeyWait = 2 * time.Second

// errClaimKeyHeld: the claim's key row was still being written by another
// transaction, maybe the claim's own try, still committing. Its outcome is
// not known yet: writeWhileUnreachable takes it as an unanswered try (it is
// no store error, and it wraps no PgError) and tries again.
var errClaimKeyHeld = errors.New("the claim's key row is still held by a transaction (perhaps the claim's own try, still committing)")

// awaitClaimKey waits, inside tx, until no other transaction is writing the
// claim's key row. A try of the claim whose connection was lost while the
// server was inside its COMMIT (a synchronous replica's acknowledgement, a
// slow fsync) is still in progress, its job not yet visible, and commits
// later: reading the job before it settles would take "no job" for "the
// claim did not commit". An insert of the same key (awaitClaimKeySQL) waits
// for an in-progress insert or take-over of it to commit or abort (the unique
// index's check); ON CONFLICT DO NOTHING then writes nothing, and when the
// key is free the row it inserted is rolled back with the savepoint, and with
// it the wait's bound (set within it, for this wait only: lockWaitSQL) and the
// foreign key's deferred check. The job read afterwards is as that try left
// it. One round trip.
func awaitClaimKey(ctx context.Context, tx pgx.Tx, req *claimRequest) error {
	nj := req.nj
	b := &pgx.Batch{}
	b.Queue(`SAVEPOINT await_claim_key`)
	b.Queue(lockWaitSQL, lockWaitArg(lostClaimKeyWait))
	b.Queue(awaitClaimKeySQL, nj.Owner, nj.Operation, nj.IdempotencyKey, req.jobID, nj.Fingerprint)
	b.Queue(`ROLLBACK TO SAVEPOINT await_claim_key`)
	err := tx.SendBatch(ctx, b).Close()
	if Busy(err) {
		return fmt.Errorf("%w (%v)", errClaimKeyHeld, err)
	}
	return err
}
