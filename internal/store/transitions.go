package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/jsontext"
)

// lockJob locks the job row for the rest of tx and returns its state and version.
// Statements after it read with a snapshot that includes every change committed
// before the lock was granted. An id not in canonical form is ErrNotFound
// (checkJobID).
func lockJob(ctx context.Context, tx pgx.Tx, jobID, owner string) (state string, version int64, err error) {
	return lockJobWaiting(ctx, tx, jobID, owner, 0)
}

// lockJobWaiting is lockJob that first bounds tx's lock waits, this one and
// the rest of tx's, to wait (lockWaitSQL), in the same round trip as the
// lock (lockWaitQueryRow); wait 0 leaves them as they are (lockJob).
func lockJobWaiting(ctx context.Context, tx pgx.Tx, jobID, owner string, wait time.Duration) (state string, version int64, err error) {
	if err := checkJobID(jobID); err != nil {
		return "", 0, err
	}
	q := `SELECT state, version FROM jobs WHERE id = $1 FOR UPDATE`
	args := []any{jobID}
	if owner != "" {
		q = `SELECT state, version FROM jobs WHERE id = $1 AND owner = $2 FOR UPDATE`
		args = append(args, owner)
	}
	if wait > 0 {
		err = lockWaitQueryRow(ctx, tx, wait, q, args...).Scan(&state, &version)
	} else {
		err = tx.QueryRow(ctx, q, args...).Scan(&state, &version)
	}
	return state, version, notFound(err)
}

// attemptCounts counts a job's attempts that are in flight and unknown.
func attemptCounts(ctx context.Context, tx pgx.Tx, jobID string) (inflight, unknown int, err error) {
	err = tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state IN ('starting', 'running')),
			count(*) FILTER (WHERE state = 'unknown')
		FROM attempts WHERE job_id = $1`, jobID).Scan(&inflight, &unknown)
	return inflight, unknown, err
}

// setJobState moves a locked job to state, bumping version, and announces it.
func (s *Store) setJobState(ctx context.Context, tx pgx.Tx, jobID, state, reason string) error {
	_, err := tx.Exec(ctx, `UPDATE jobs SET state = $2, error = nullif($3, ''), version = version + 1,
			updated_at = now(), finished_at = CASE WHEN $2 IN ('failed', 'cancelled', 'succeeded') THEN now() END,
			lease_owner = CASE WHEN $2 IN ('pending', 'running') THEN lease_owner END,
			lease_expires_at = CASE WHEN $2 IN ('pending', 'running') THEN lease_expires_at END
		WHERE id = $1`, jobID, state, jsontext.SanitizeString(reason)) // reasons quote providers
	if err != nil {
		return err
	}
	expiry := `UPDATE idempotency_keys SET expires_at = NULL WHERE job_id = $1`
	args := []any{jobID}
	if IsTerminal(state) {
		expiry = `UPDATE idempotency_keys SET expires_at = now() + $2::interval WHERE job_id = $1`
		args = append(args, s.opt.KeyRetention)
	}
	if _, err := tx.Exec(ctx, expiry, args...); err != nil {
		return err
	}
	return notify(ctx, tx, jobID, state)
}

// SettleJob decides a running job's state once an attempt has ended and the
// runner has nothing more to start: `unknown` if an attempt's outcome is
// unknown, `failed` (with reason) if every attempt failed definitively. It does
// nothing while an attempt is in flight or when the job is no longer running.
// It returns the job's state afterwards. It is not fenced by the job's lease:
// it is for callers that orchestrate nothing (operator tools, tests); an
// orchestrator settles with SettleJobAs.
func (s *Store) SettleJob(ctx context.Context, jobID, failReason string) (string, error) {
	state, _, err := s.settle(ctx, jobID, "", failReason, false)
	return state, err
}

// SettleJobAs is SettleJob for the orchestrator owner, fenced by the job's
// orchestration lease: a pending or running job is settled only while owner
// holds its lease (expired or not: nobody else has taken it). When another
// process holds it — it adopted the job after owner's lease expired, and may
// be about to start an attempt or waiting out a retry's backoff, with nothing
// in flight — or nobody does, nothing changes and the answer is ErrLeaseLost:
// the job is no longer owner's to settle (a job left with nothing in flight
// and no live lease is an orphan, which recovery adopts). A job already out
// of pending and running is answered with its state, as by SettleJob.
//
// settled says that this call moved the job out of pending and running: a
// job already ended (by recovery's leader while owner stalled, by a
// cancellation) is answered with its state and settled false, so that only
// the settlement that made the change is counted (Observer.JobSettled).
//
// The job's row, and the others the settlement writes, are waited for up to
// exitLockWait: a row another transaction holds for longer is ErrBusy (a
// *BusyError), nothing changes, and the job is left to its lease.
func (s *Store) SettleJobAs(ctx context.Context, jobID, owner, failReason string) (state string, settled bool, err error) {
	if owner == "" {
		return "", false, fmt.Errorf("settle job %s: no lease owner given", jobID)
	}
	return s.settle(ctx, jobID, owner, failReason, false)
}

// SettleBlockedJobAs is SettleJobAs for an orchestrator whose race stopped
// because an attempt went unknown. The check that an attempt is still unknown
// is made on the locked row, in the settle's own transaction: when a
// resolution (`failed`, by an operator or reconciliation) lifted the block
// since the orchestrator learnt of it, nothing changes and the answer is
// ErrUnblocked, so the race goes on instead of the job failing with targets
// left untried. (Checked before the settle, a resolution in between left the
// job `failed`: the resolution saw it running, so it did not resume it.)
func (s *Store) SettleBlockedJobAs(ctx context.Context, jobID, owner, failReason string) (state string, settled bool, err error) {
	if owner == "" {
		return "", false, fmt.Errorf("settle job %s: no lease owner given", jobID)
	}
	return s.settle(ctx, jobID, owner, failReason, true)
}

// settle is SettleJob, fenced by owner's lease unless owner is "". When
// blocked, a job without an unknown attempt is left as it is (ErrUnblocked).
// An orchestrator's settlement (owner set) waits for rows up to exitLockWait.
// settled says that this call moved the job out of pending and running.
func (s *Store) settle(ctx context.Context, jobID, owner, failReason string, blocked bool) (final string, settled bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		final, settled = "", false // a retried transaction's
		if err := checkJobID(jobID); err != nil {
			return err
		}
		if owner != "" {
			if _, err := tx.Exec(ctx, lockWaitSQL, lockWaitArg(exitLockWait)); err != nil {
				return err
			}
		}
		// The fence is the locked row's: later writers of the lease wait
		// for this transaction.
		var held bool
		err := tx.QueryRow(ctx, `SELECT state, coalesce($2 = '' OR lease_owner = $2, false) FROM jobs WHERE id = $1 FOR UPDATE`,
			jobID, owner).Scan(&final, &held)
		if err != nil {
			return notFound(err)
		}
		if final != JobPending && final != JobRunning {
			return nil
		}
		if !held {
			return fmt.Errorf("%w: job %s is not %s's to settle: another process holds its lease, or none does", ErrLeaseLost, jobID, owner)
		}
		if blocked {
			inflight, unknown, err := attemptCounts(ctx, tx, jobID)
			if err != nil {
				return err
			}
			if inflight == 0 && unknown == 0 {
				return ErrUnblocked
			}
		}
		if settled, err = s.settleLocked(ctx, tx, jobID, failReason); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, jobID).Scan(&final)
	})
	if err != nil {
		if owner != "" {
			err = exitBusy(err, jobID)
		}
		return "", false, err
	}
	return final, settled, nil
}

// settleLocked is SettleJob inside a transaction that holds the job's lock.
// settled says that it moved the job out of pending and running (nothing is
// changed while an attempt is in flight, or when the job has ended).
func (s *Store) settleLocked(ctx context.Context, tx pgx.Tx, jobID, failReason string) (settled bool, err error) {
	var state string
	if err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, jobID).Scan(&state); err != nil {
		return false, notFound(err)
	}
	if state != JobRunning && state != JobPending {
		return false, nil
	}
	inflight, unknown, err := attemptCounts(ctx, tx, jobID)
	if err != nil || inflight > 0 {
		return false, err
	}
	final, reason := JobFailed, failReason
	if unknown > 0 {
		final = JobUnknown
		if reason, err = unknownJobReason(ctx, tx, jobID); err != nil {
			return false, err
		}
	}
	if err := s.setJobState(ctx, tx, jobID, final, reason); err != nil {
		return false, err
	}
	return true, nil
}

// unknownJobReason is the error of job jobID, locked in tx, while it is
// `unknown`: which of its attempts are unknown and how each became so, then
// the request that resolves each. It is written when the job goes unknown and
// written again when a resolution leaves it unknown, so that it never names an
// attempt that is no longer unknown (following it would be refused).
func unknownJobReason(ctx context.Context, tx pgx.Tx, jobID string) (string, error) {
	rows, err := tx.Query(ctx, `SELECT seq, coalesce(error->>'kind', '') FROM attempts
		WHERE job_id = $1 AND state = 'unknown' ORDER BY seq`, jobID)
	if err != nil {
		return "", err
	}
	attempts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[unknownAttempt])
	if err != nil {
		return "", err
	}
	return unknownReason(jobID, attempts), nil
}

// unknownAttempt is an unknown attempt's seq and its error's kind ("" when
// it has none).
type unknownAttempt struct {
	Seq  int
	Kind string
}

// unknownHow words how an attempt became unknown, by its error's kind, for
// one attempt and for several. A deadline that cut it before its first byte
// (timeout) is the common case and keeps the wording the router always had;
// the others are the router's own doing, which "timed out" would send an
// operator looking at the provider for.
var unknownHow = map[string][2]string{
	"timeout":  {"timed out", "timed out"},
	"shutdown": {"was cut off by a router shutdown", "were cut off by a router shutdown"},
	"lease_expired": {"ended when its router stopped renewing its lease (lease expired)",
		"ended when their routers stopped renewing their leases (lease expired)"},
}

// unknownNeutral words an unknown attempt of any other kind, or of none. It
// says by itself that the outcome is unknown.
var unknownNeutral = [2]string{"ended without a known outcome", "ended without a known outcome"}

// unknownReason words unknownJobReason for attempts, in seq order: grouped
// by how they became unknown, the groups in the order of their first attempt
// ("attempts 1 and 3 timed out, and attempt 2 was cut off by a router
// shutdown; their outcomes are unknown: …").
func unknownReason(jobID string, attempts []unknownAttempt) string {
	type group struct {
		how  [2]string
		seqs []int
	}
	var groups []*group
	seqs := make([]int, 0, len(attempts))
	for _, a := range attempts {
		seqs = append(seqs, a.Seq)
		how, ok := unknownHow[a.Kind]
		if !ok {
			how = unknownNeutral
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.how == how })
		if i < 0 {
			i = len(groups)
			groups = append(groups, &group{how: how})
		}
		groups[i].seqs = append(groups[i].seqs, a.Seq)
	}
	clauses := make([]string, len(groups))
	for i, g := range groups {
		how := g.how[0]
		if len(g.seqs) > 1 {
			how = g.how[1]
		}
		clauses[i] = attemptsWord(g.seqs) + " " + how
	}
	var what string
	switch {
	case len(groups) == 0: // none left to name: a locked unknown job has one
		what = "an attempt's outcome is unknown"
	case len(groups) > 1:
		// The serial comma keeps "attempts 1 and 3" one subject.
		what = strings.Join(clauses[:len(clauses)-1], ", ") + ", and " + clauses[len(clauses)-1] +
			"; their outcomes are unknown"
	case groups[0].how == unknownNeutral:
		what = clauses[0]
	case len(seqs) > 1:
		what = clauses[0] + " and their outcomes are unknown"
	default:
		what = clauses[0] + " and its outcome is unknown"
	}
	return what + ": the provider may or may not have done the work. " + resolveHint(jobID, seqs) + ", or cancel the job."
}

// CancelJob cancels owner's job: it becomes `cancelled`, its in-flight and
// unknown attempts are cancelled and can no longer win (one still starting,
// never sent, with kind not_sent). Cancelling a cancelled job
// is a no-op; a succeeded or failed job answers ErrJobFinished. The job's row,
// and the others the cancellation writes, are waited for up to
// transitionLockWait: a row another transaction holds for longer is ErrBusy (a
// *BusyError naming the job), and nothing changes.
func (s *Store) CancelJob(ctx context.Context, owner, jobID string) error {
	cancelled := false
	err := jobBusy(s.inTx(ctx, func(tx pgx.Tx) error {
		cancelled = false // a retried transaction's
		state, _, err := lockJobWaiting(ctx, tx, jobID, owner, transitionLockWait)
		if err != nil {
			return err
		}
		switch state {
		case JobCancelled:
			return nil
		case JobSucceeded, JobFailed:
			return fmt.Errorf("%w: job already %s", ErrJobFinished, state)
		}
		// An unknown attempt keeps the time its call ended, as a win keeps it
		// (settleSiblingsSQL): its latency is the call's, not the wait for
		// a decision. One still starting (created, not yet sent: its
		// MarkAttemptRunning, the last step before the send, now refuses it)
		// was never sent and is recorded so (kind not_sent, NotSent), as a
		// win records its starting siblings (settleSiblingsSQL) and
		// markRunningSQL one it finds on an ended job: the attempt view says
		// it never reached its provider, not that a call was cut. An
		// unknown one's error is marked "breaker": "failure"
		// (markedFailureSQL), as a win marks an unknown sibling it settles
		// lost: its breaker counted its unknown end as a failure, and
		// /v1/providers' stats count it so, not as a cancellation.
		if _, err := tx.Exec(ctx, `UPDATE attempts SET state = 'cancelled',
				error = CASE WHEN state = 'starting' THEN jsonb_build_object('kind', '`+notSentKind+`', 'fault', 'router',
					'message', 'the request was never sent: the job was cancelled before it could be')
					WHEN state = 'unknown' THEN `+markedFailureSQL(`error`)+` ELSE error END,
				finished_at = CASE WHEN state = 'unknown' THEN coalesce(finished_at, now()) ELSE now() END,
				lease_owner = NULL, lease_expires_at = NULL
			WHERE job_id = $1 AND state IN ('starting', 'running', 'unknown')`, jobID); err != nil {
			return err
		}
		cancelled = true
		return s.setJobState(ctx, tx, jobID, JobCancelled, "cancelled by the caller")
	}), jobID, transitionLockWait)
	if err == nil && cancelled {
		s.toldSettledByNoRun(JobCancelled) // counted once, here: no run's settlement counts it
	}
	return err
}
