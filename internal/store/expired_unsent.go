package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// undoExpiredUnsentLocked records that attempt attemptID of job jobID, whose
// row tx has locked, was never sent, and undoes what recovery made of it when
// its lease expired first. The caller knows that the request never left this
// process (it was not marked running, or was never handed to its provider):
// that knowledge, not the database, is what makes the undo safe, and no
// caller may use it for an attempt a provider could have received.
//
// The attempt becomes `cancelled` not_sent (cancelUnsentLocked), when it is
// still in flight or when recovery marked it `unknown` with kind
// lease_expired — only recovery writes that kind, so an attempt that went
// unknown any other way (a timeout, a shutdown's cut after sending) is never
// touched. cancelled says whether it did. Recovery made the job `unknown`
// with it (settleLocked); when the job is still unknown:
//
//   - with another unknown attempt, it stays unknown and its error is
//     rewritten to name only those left, as a `failed` resolution does
//     (ResolveAttempt);
//   - with none (and nothing in flight), the job goes back to `running` as a
//     new run (run_started_at now, as a resolution's resumption), with no
//     lease: an orphan, which recovery adopts, unless the caller resumes it
//     first (resumed). With failWhy set it is `failed` with that reason
//     instead (a lost claim whose caller cannot reach the job).
//
// A job in any other state is left as it is: running, its orchestrator goes
// on; ended, nothing is left to run.
func (s *Store) undoExpiredUnsentLocked(ctx context.Context, tx pgx.Tx, jobID, attemptID, why, failWhy string) (cancelled, resumed bool, err error) {
	cancelled, err = cancelUnsentLocked(ctx, tx, jobID, attemptID, why, true)
	if err != nil || !cancelled {
		return false, false, err
	}
	var state string
	if err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, jobID).Scan(&state); err != nil {
		return false, false, notFound(err)
	}
	if state != JobUnknown {
		return true, false, nil
	}
	inflight, unknown, err := attemptCounts(ctx, tx, jobID)
	switch {
	case err != nil:
		return false, false, err
	case unknown > 0:
		reason, err := unknownJobReason(ctx, tx, jobID)
		if err != nil {
			return false, false, err
		}
		return true, false, s.setJobState(ctx, tx, jobID, JobUnknown, reason)
	case inflight > 0:
		return true, false, nil // an unknown job has none; its end settles it
	case failWhy != "":
		return true, true, s.setJobState(ctx, tx, jobID, JobFailed, failWhy)
	}
	// Running without a lease (an unknown job has none): an orphan.
	if _, err := tx.Exec(ctx, `UPDATE jobs SET run_started_at = now(), lease_owner = NULL, lease_expires_at = NULL
		WHERE id = $1 AND state = 'unknown'`, jobID); err != nil {
		return false, false, err
	}
	return true, true, s.setJobState(ctx, tx, jobID, JobRunning, "")
}

// RecordNotSentExpired records that attempt attemptID of job jobID was never
// sent when its record as such came too late: this process stalled (a
// freeze, a partition) past the attempt's lease before sending it, and
// recovery marked it `unknown` (lease_expired) and the job with it. The
// attempt becomes `cancelled` not_sent and the job, unknown only because of
// it, goes back to `running` with no lease (undoExpiredUnsentLocked): resume
// says so, and the caller may run it again at once (recovery adopts it
// otherwise). An attempt still in flight is recorded as RecordNotSent
// records one.
//
// Only for an attempt whose request the caller knows never left: one a
// provider could have received stays unknown, for reconciliation or an
// operator. An attempt neither in flight nor unknown after its lease expired
// (its job's end or cancellation settled it, a resolution) is
// ErrStateConflict, and nothing changes.
//
// One transaction, the job row locked first; rows are waited for up to
// transitionLockWait (ErrBusy past it). A database that does not answer is
// tried again for up to unsentRetryFor: an outage long enough to let the
// lease expire is the very case this record is for.
func (s *Store) RecordNotSentExpired(ctx context.Context, jobID, attemptID, why string) (resume bool, err error) {
	err = writeWhileUnreachable(ctx, unsentRetryFor, func(ctx context.Context) error {
		r, err := s.recordNotSentExpired(ctx, jobID, attemptID, why)
		resume = resume || r
		return err
	}, ErrStateConflict) // after a lost answer: that try recorded it (and resumed the job, if it did: recovery adopts it)
	return resume && err == nil, err
}

// recordNotSentExpired is one try of RecordNotSentExpired; jobID "" is
// attemptID's job.
func (s *Store) recordNotSentExpired(ctx context.Context, jobID, attemptID, why string) (resumed bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		resumed = false // a retried transaction's
		if err := lockWaitQueryRow(ctx, tx, transitionLockWait,
			`SELECT job_id::text FROM attempts WHERE id = $1 AND ($2 = '' OR job_id::text = $2)`, attemptID, jobID).Scan(&jobID); err != nil {
			return notFound(err)
		}
		if _, _, err := lockJob(ctx, tx, jobID, ""); err != nil {
			return err
		}
		cancelled, r, err := s.undoExpiredUnsentLocked(ctx, tx, jobID, attemptID, why, "")
		if err != nil {
			return err
		}
		if !cancelled {
			return unsentConflict(ctx, tx, jobID, attemptID, "record as never sent")
		}
		resumed = r
		return nil
	})
	if err != nil {
		return false, jobBusy(err, jobID, transitionLockWait)
	}
	return resumed, nil
}

// unsentConflict is the error of a record that attempt attemptID of job
// jobID was never sent (what names it) that changed nothing: ErrNotFound
// when the job has no such attempt, else ErrStateConflict naming the state
// the attempt is in (with the kind of its error, if any).
func unsentConflict(ctx context.Context, tx pgx.Tx, jobID, attemptID, what string) error {
	var state, kind string
	err := tx.QueryRow(ctx, `SELECT state, coalesce(error->>'kind', '') FROM attempts WHERE id = $1 AND job_id = $2`,
		attemptID, jobID).Scan(&state, &kind)
	if err != nil {
		return fmt.Errorf("%s attempt %s: %w", what, attemptID, notFound(err))
	}
	if kind != "" {
		state += " (" + kind + ")"
	}
	return fmt.Errorf("%w: %s attempt %s: it is %s; only an attempt in flight, or one recovery marked unknown when its lease expired, can be",
		ErrStateConflict, what, attemptID, state)
}
