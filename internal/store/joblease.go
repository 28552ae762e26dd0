package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// AcquireJobLease takes (or renews) the orchestration lease of a pending or
// running job for owner, when it is free, expired with no attempt in flight,
// or already owner's. ok=false means another live process holds it, the
// process whose lease expired still has an attempt of the job in flight, or
// the job no longer needs one.
//
// It is the first write of a run that is not fresh (a resumption after a
// resolution, a caller's retry, an adoption), so it waits for the job's row
// up to transitionLockWait, as the race's other transitions do: a row another
// transaction holds for longer (an operator's transaction left open, a
// replica cut off in the middle of one) is ErrBusy (a *BusyError naming the
// job) and nothing changes — the run does not start now, and the job stays
// as it was for its lease, recovery, or a caller's next request.
//
// An expired lease is taken only from a job with no attempt `starting` or
// `running`, as ClaimOrphans adopts only such a job (orphanSQL).
// An orchestrator that stalled past its lease (its renewal lagged) may still
// have an attempt in flight, with a lease of its own that has not run out: a
// run that took the job over would not know of that attempt — it would count
// its target as tried and fail over beside it at once, a second attempt in
// flight outside the hedge clock and the hedge budget (SPEC §6.4, §6.8). The
// job stays its orchestrator's: once the attempt ends, it wins or its
// orchestrator goes on; should that orchestrator be dead, recovery marks the
// attempt `unknown` when its lease expires. The row is locked by a statement
// of its own before the condition is read (execLazyJobLocked), in the same
// round trip: an attempt a stalled orchestrator committed while this waited
// for the row is seen.
func (s *Store) AcquireJobLease(ctx context.Context, jobID, owner string, lease time.Duration) (ok bool, err error) {
	// Lazy: a lost lease only delays the run until recovery.
	tag, err := s.execLazyJobLocked(ctx, transitionLockWait, jobID, `UPDATE jobs SET lease_owner = $2, lease_expires_at = now() + $3::interval
		WHERE id = $1 AND state IN ('pending', 'running')
		  AND (lease_owner IS NULL OR lease_owner = $2 OR (lease_expires_at < now()
		       AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = jobs.id AND a.state IN ('starting', 'running'))))`,
		jobID, owner, lease)
	if err != nil {
		return false, jobBusy(err, jobID, transitionLockWait)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseJobLease gives the job's lease up, if owner holds it. The lease
// ends now rather than being cleared: lease_expires_at then says since when
// an unfinished job has waited for an orchestrator (orphanedSinceSQL).
//
// It waits for the job's row up to exitLockWait: a row another transaction
// holds for longer is ErrBusy (a *BusyError) and nothing changes — the lease
// is left to expire.
func (s *Store) ReleaseJobLease(ctx context.Context, jobID, owner string) error {
	// Lazy: a lost release only delays an adoption.
	_, err := s.execLazyWaiting(ctx, exitLockWait, `UPDATE jobs SET lease_owner = NULL, lease_expires_at = now()
		WHERE id = $1 AND lease_owner = $2`, jobID, owner)
	return exitBusy(err, jobID)
}

// ReleaseJobLeaseFor is ReleaseJobLease for a job that waits for a circuit
// breaker (race's runLater): the lease ends wait from now on the database's
// clock, not now, with no owner. Released with an end of now, such a job was
// an orphan at once, and ClaimOrphans — oldest first — adopted it again on
// every recovery pass, only for its breakers to refuse it again: enough of
// them filled every adoption batch ahead of the other orphans. Meanwhile it
// is no orphan, but any replica may still take it (AcquireJobLease takes a
// lease with no owner), as the releasing runner does when the wait is over.
func (s *Store) ReleaseJobLeaseFor(ctx context.Context, jobID, owner string, wait time.Duration) error {
	// Lazy: a lost release only delays an adoption.
	_, err := s.execLazyWaiting(ctx, exitLockWait, `UPDATE jobs SET lease_owner = NULL, lease_expires_at = now() + $3::interval
		WHERE id = $1 AND lease_owner = $2`, jobID, owner, max(wait, 0))
	return exitBusy(err, jobID)
}

// exitLockWait bounds how long the writes that end an orchestration — the
// release of a job's lease (ReleaseJobLease), its settlement by its
// orchestrator (SettleJobAs), the hand-over of an attempt never sent
// (HandOverUnsent) — wait for a row another transaction holds (lock_timeout).
// Their usual waits are a concurrent transaction's milliseconds (a
// cancellation, a win, a lease renewal); a row held for longer — an
// operator's transaction left open in psql, a replica cut off in the middle
// of one — would hold the job's run, the lease keeper's renewal of its lease,
// and the runner's Stop behind it, for as long as it is held. Past it the
// write changes nothing (ErrBusy), and the job is left to its lease:
// recovery takes it over once it expires.
const exitLockWait = 2 * time.Second

// exitBusy is err, as a *BusyError naming the job when it is a lock wait
// that ran into exitLockWait.
func exitBusy(err error, jobID string) error { return jobBusy(err, jobID, exitLockWait) }

// Orphans are jobs that need an orchestrator: pending or running, with no
// attempt in flight and no live lease — their process died before starting the
// first attempt, between attempts, or between an attempt becoming unknown and
// settling the job (the new orchestrator then settles it as unknown).
type Orphan struct {
	ID string
}

// orphanSQL is the condition of an orphaned job (alias j): pending or running,
// no live lease, nothing in flight.
const orphanSQL = `j.state IN ('pending', 'running')
	AND (j.lease_expires_at IS NULL OR j.lease_expires_at < now())
	AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id AND a.state IN ('starting', 'running'))`

// Runnable is what one replica can run: a job on one of Routes whose
// (operation, prompt version) is one of the pairs (Operations[i],
// Versions[i]). During a rolling update that changes a prompt's version or
// the routes, an orphaned job may need a replica of the other version; a
// replica that cannot run it leaves it to one that can.
type Runnable struct {
	Routes               []string
	Operations, Versions []string
	// OwnAfter: a job this replica can run is adopted once it has been an
	// orphan this long (0: at once). A replica that is not the maintenance
	// leader waits, leaving orphans to the leader's recovery first, and
	// adopts those the leader cannot run.
	OwnAfter time.Duration
	// OthersAfter, when positive: a job this replica cannot run is adopted
	// too once it has been an orphan this long, to be failed with the reason
	// (the leader's pass), so that a job no replica can run does not stay
	// pending for ever. 0: never.
	OthersAfter time.Duration
}

// orphanedSinceSQL is since when a job (alias j) that needs an orchestrator
// has waited for one, on the database clock: its lease's end (expired, or
// released: ReleaseJobLease ends it now), or the start of its current run
// (a retry, a resumption: no lease yet), or its creation.
const orphanedSinceSQL = `coalesce(j.lease_expires_at, j.run_started_at, j.created_at)`

// runnableSQL is the condition of a job (alias j) the adopting replica can
// run, or one that has waited long enough for another ($2 NULL: any job).
const runnableSQL = `($2::text[] IS NULL
	OR (j.route = ANY($2::text[]) AND (j.operation, j.prompt_version) IN (SELECT * FROM unnest($3::text[], $4::text[]))
	    AND ` + orphanedSinceSQL + ` <= now() - $5::interval)
	OR ` + orphanedSinceSQL + ` <= now() - $6::interval)`

// args are runnableSQL's parameters $2 to $6 (all NULL for a nil Runnable).
func (r *Runnable) args() (routes, ops, versions []string, own, others *time.Duration) {
	if r == nil {
		return nil, nil, nil, nil, nil
	}
	routes = r.Routes
	if routes == nil {
		routes = []string{} // no route: only others' jobs (NULL would mean any)
	}
	own = &r.OwnAfter
	if r.OthersAfter > 0 {
		others = &r.OthersAfter // NULL otherwise: the term is never true
	}
	return routes, r.Operations, r.Versions, own, others
}

// ClaimOrphans takes the lease of up to limit orphaned jobs for owner and
// returns them. SKIP LOCKED keeps replicas from fighting over the same rows; the
// conditional lease keeps any job to one orchestrator.
//
// It decides in two statements of one transaction: the first locks the
// candidates, the second re-checks them (with a snapshot taken after the locks
// are held) and takes their leases. One statement is not enough: its NOT
// EXISTS over attempts reads the statement's snapshot, and a former owner
// whose lease has just expired (stalled, not dead) may have locked the job row
// in CreateAttempt and committed an attempt after that snapshot was taken and
// before the row was reached. The row lock then succeeds (an unchanged row is
// not re-checked at all; a changed one is re-checked by EvalPlanQual on its new
// version, but the subquery still reads the old snapshot), and the job would
// be adopted with an attempt in flight: a second attempt could be sent
// (SPEC §5, §6). Once the row is locked here, every CreateAttempt that locked
// it first has committed before the second statement's snapshot, and every
// later one waits for this commit and is then fenced by the new lease owner.
//
// can, when not nil, limits the adoption to the jobs this replica can run
// (Runnable); nil adopts any orphan.
func (s *Store) ClaimOrphans(ctx context.Context, owner string, lease time.Duration, limit int, can *Runnable) ([]string, error) {
	var ids []string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ids = nil // a retried transaction's
		routes, ops, versions, own, others := can.args()
		rows, err := tx.Query(ctx, `SELECT j.id::text FROM jobs j WHERE `+orphanSQL+` AND `+runnableSQL+`
			ORDER BY j.created_at LIMIT $1 FOR UPDATE SKIP LOCKED`, limit, routes, ops, versions, own, others)
		if err != nil {
			return err
		}
		locked, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(locked) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `UPDATE jobs j SET lease_owner = $1, lease_expires_at = now() + $2::interval
			WHERE j.id = ANY($3::uuid[]) AND `+orphanSQL+`
			RETURNING j.id::text`, owner, lease, locked)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// ExpireAttemptLeases marks every in-flight attempt whose lease has expired
// `unknown` (its router died: the provider may or may not have done the work)
// and settles its job, one job per transaction with the job row locked first
// (the lock order of every other writer). It never re-dispatches. An attempt
// whose job has already ended (a loser kept running after the win) is settled
// instead as the job's end settles its attempts, in the same conditional
// update (unknownUnlessEndedSQL): `lost` with a race event on a succeeded job,
// `cancelled` on a cancelled or failed one. It returns the ids of the jobs
// that got an unknown attempt, and the first error after trying every job.
//
// It never waits long for a row another transaction holds: one job held by
// an operator's transaction left open, or by a replica that lost its
// connection in the middle of a transaction (PostgreSQL keeps its locks until
// it notices), stopped the whole scan — and the leader's orphan adoption and
// reconciliation behind it — for as long as it was held. A job whose row is
// locked is passed over (SKIP LOCKED) and tried once more after the others,
// waiting for it up to expiryLockWait (a transaction that holds it for
// milliseconds, as a lease renewal or a settlement does, is waited for); any
// other row of the job (an attempt, its key) is waited for up to
// expiryLockWait too. A job still held then is left for the next pass, and
// the error, when there is no other, is a *BusyError naming the jobs left.
func (s *Store) ExpireAttemptLeases(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT job_id::text FROM attempts
		WHERE state IN ('starting', 'running') AND lease_expires_at < now()`)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var done, later, held []string
	var first error
	for _, id := range ids {
		unknown, err := s.expireJobAttempts(ctx, id, false)
		switch {
		case errors.Is(err, errRowHeld):
			later = append(later, id)
		case Busy(err):
			held = append(held, id)
		case err != nil:
			first = cmp.Or(first, err)
		case unknown:
			done = append(done, id)
		}
	}
	for _, id := range later {
		unknown, err := s.expireJobAttempts(ctx, id, true)
		switch {
		case Busy(err):
			held = append(held, id)
		case err != nil:
			first = cmp.Or(first, err)
		case unknown:
			done = append(done, id)
		}
	}
	if first == nil && len(held) > 0 {
		first = &BusyError{What: "a row of job(s) " + strings.Join(held, ", "), Wait: expiryLockWait}
	}
	return done, first
}

// expiryLockWait bounds each of lease expiry's lock waits
// (ExpireAttemptLeases).
const expiryLockWait = time.Second

// errRowHeld: the job's row is locked by another transaction, and the caller
// asked not to wait for it.
var errRowHeld = errors.New("the job's row is held by another transaction")

// expireJobAttempts is ExpireAttemptLeases for one job, in one transaction
// whose lock waits last expiryLockWait at most: unknown reports whether an
// attempt of it became unknown (and the job was settled). Unless wait, a job
// row another transaction holds is not waited for at all: errRowHeld.
func (s *Store) expireJobAttempts(ctx context.Context, id string, wait bool) (unknown bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		unknown = false // a retried transaction's
		if _, err := tx.Exec(ctx, lockWaitSQL, lockWaitArg(expiryLockWait)); err != nil {
			return err
		}
		if err := checkJobID(id); err != nil {
			return err
		}
		lock := `SELECT FROM jobs WHERE id = $1 FOR UPDATE SKIP LOCKED`
		if wait {
			lock = `SELECT FROM jobs WHERE id = $1 FOR UPDATE`
		}
		tag, err := tx.Exec(ctx, lock, id)
		switch {
		case err != nil:
			return err
		case tag.RowsAffected() == 0 && wait:
			return ErrNotFound
		case tag.RowsAffected() == 0:
			return errRowHeld // or gone: the try that waits tells
		}
		var n int
		err = tx.QueryRow(ctx, `WITH x AS (
				UPDATE attempts a SET state = `+unknownUnlessEndedSQL+`, finished_at = now(),
					error = jsonb_build_object('kind', 'lease_expired', 'fault', 'router', 'outcome_unknown', true,
						'router', a.lease_owner,
						'message', 'the router running this attempt stopped renewing its lease (it died or lost the database); '
						|| 'the provider may or may not have done the work'
						|| CASE WHEN j.state IN ('succeeded', 'cancelled', 'failed')
						        THEN '; it no longer matters: its job had already ended (' || j.state || ')' ELSE '' END),
					lease_owner = NULL, lease_expires_at = NULL
				FROM jobs j
				WHERE j.id = $1 AND a.job_id = j.id AND a.state IN ('starting', 'running') AND a.lease_expires_at < now()
				RETURNING a.id, a.job_id, a.provider, a.state
			), e AS (`+lostEventSQL+`)
			SELECT count(*) FILTER (WHERE state = 'unknown') FROM x`, id).Scan(&n)
		if err != nil || n == 0 {
			return err // none, or only attempts of a job that had ended: nothing to settle
		}
		unknown = true
		_, err = s.settleLocked(ctx, tx, id, "")
		return err
	})
	return unknown && err == nil, err
}

// notSentKind is the error kind of an attempt that was never sent (NotSent).
const notSentKind = "not_sent"

// notSentError is the error recorded on an attempt never sent, why its message.
func notSentError(why string) map[string]any {
	return map[string]any{"kind": notSentKind, "fault": "router", "message": why}
}

// RecordNotSent records that an attempt was created but never sent (the
// router stopped, or the attempt stopped being startable, before the request
// left): it becomes cancelled with kind not_sent and why as its message, and
// counts neither as its provider tried nor against max_attempts (NotSent).
//
// An attempt recovery already marked `unknown` because its lease expired
// first (this process stalled, or the database did not answer, past the
// lease) is recorded all the same, and its job, unknown only because of it,
// runs again (RecordNotSentExpired): its caller knows the request never
// left. Any other attempt no longer in flight is ErrStateConflict.
//
// A database that does not answer is tried again for up to unsentRetryFor
// (writeWhileUnreachable): the record is what keeps the attempt from
// staying `unknown` once its lease expires.
func (s *Store) RecordNotSent(ctx context.Context, attemptID, why string) error {
	return writeWhileUnreachable(ctx, unsentRetryFor, func(ctx context.Context) error {
		_, err := s.finishAttemptAs(ctx, attemptID, AttemptOutcome{State: AttemptCancelled,
			Error: notSentError(why)})
		if !errors.Is(err, ErrStateConflict) {
			return err
		}
		_, err = s.recordNotSentExpired(ctx, "", attemptID, why)
		return err
	}, ErrStateConflict) // after a lost answer: that try finished it
}

// HandOverUnsent gives up a job whose attempt this process created but never
// sent (it is stopping): the attempt becomes `cancelled` with kind not_sent
// (so it counts neither as a provider tried nor against max_attempts), and
// owner's lease on the job is released, so another replica adopts the job as
// an orphan and runs it as if new — the attempts sent before it still count.
// An attempt recovery already marked `unknown` because its lease expired
// first is recorded all the same, and its job, unknown only because of it,
// goes back to `running` with no lease, an orphan too
// (undoExpiredUnsentLocked). One transaction, the job row locked first; a
// database that does not answer is tried again for up to unsentRetryFor, as
// RecordNotSent. A row another transaction holds is waited for up to
// exitLockWait (ErrBusy past it: the attempt is then left to its lease, as
// when the process dies).
func (s *Store) HandOverUnsent(ctx context.Context, jobID, attemptID, owner, why string) error {
	return writeWhileUnreachable(ctx, unsentRetryFor, func(ctx context.Context) error {
		return s.handOverUnsent(ctx, jobID, attemptID, owner, why)
	}, ErrNotFound, ErrStateConflict) // after a lost answer: that try handed it over
}

func (s *Store) handOverUnsent(ctx context.Context, jobID, attemptID, owner, why string) error {
	return exitBusy(s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockWaitSQL, lockWaitArg(exitLockWait)); err != nil {
			return err
		}
		if _, _, err := lockJob(ctx, tx, jobID, ""); err != nil {
			return err
		}
		cancelled, _, err := s.undoExpiredUnsentLocked(ctx, tx, jobID, attemptID, why, "")
		if err != nil {
			return fmt.Errorf("hand over attempt %s: %w", attemptID, err)
		}
		if !cancelled {
			return unsentConflict(ctx, tx, jobID, attemptID, "hand over")
		}
		_, err = tx.Exec(ctx, `UPDATE jobs SET
				lease_owner = CASE WHEN lease_owner = $2 THEN NULL ELSE lease_owner END,
				lease_expires_at = CASE WHEN lease_owner = $2 THEN now() ELSE lease_expires_at END
			WHERE id = $1`, jobID, owner)
		return err
	}), jobID)
}

// cancelUnsentLocked records that attempt attemptID of job jobID (whose row
// the transaction has locked) was never sent: `cancelled` with kind not_sent
// and why as its message, which is what keeps it from counting as its
// provider tried or against max_attempts (CreateAttempt's count, race's
// inRound). Only an attempt still in flight changes — or, with orExpired, one
// recovery marked unknown when its lease expired (lease_expired): cancelled
// says whether it did.
//
// The job's attempt_base is left as it is. It once moved past the attempt
// (when not_sent attempts still counted), which also dropped every attempt
// sent before it in the round: a job resumed after a stalled failover sent
// the request again to a provider that had already answered, and
// max_attempts started over. attempt_base moves only with the caller's
// explicit retry (RetryJob).
func cancelUnsentLocked(ctx context.Context, tx pgx.Tx, jobID, attemptID, why string, orExpired bool) (cancelled bool, err error) {
	tag, err := tx.Exec(ctx, `UPDATE attempts SET state = 'cancelled', finished_at = now(),
			error = jsonb_build_object('kind', $4::text, 'fault', 'router', 'message', $3::text),
			lease_owner = NULL, lease_expires_at = NULL
		WHERE id = $2 AND job_id = $1
			AND (state IN ('starting', 'running') OR ($5 AND state = 'unknown' AND error->>'kind' = 'lease_expired'))`,
		jobID, attemptID, why, notSentKind, orExpired)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() > 0, nil
}
