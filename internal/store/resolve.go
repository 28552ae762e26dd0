package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Resolution is an out-of-band verdict on an unknown attempt (SPEC §6.7).
type Resolution struct {
	Owner   string // "" for the router's own reconciliation
	JobID   string
	Seq     int
	Outcome string          // "failed" or "succeeded"
	Result  json.RawMessage // the validated result, for "succeeded"
	Note    string          // who resolved it and why, kept on the attempt
	Usage   any
	// Error, for "failed", when known: the failure the provider's record of
	// the attempt holds (JSON-encodable, the taxonomy's kind, fault, action,
	// message, as a live attempt's error). It replaces the error that made
	// the attempt unknown (a timeout, an expired lease), which the resolution
	// keeps as `replaced`: what the provider did decides what the job does
	// next (SPEC §6.3: a content-policy rejection is not failed over), and
	// what the caller is told. nil keeps the attempt's error.
	Error any
	// ValidationErrors, for "failed", when the provider answered and its
	// answer broke the contract (JSON-encodable violations): the attempt is
	// stored `invalid` with them, as FinishAttempt stores a live invalid
	// answer, so that the job shows why the answer was refused. The
	// resolution is a failure in every other way (the note's outcome, the
	// job's resumption). nil: the attempt is stored `failed`.
	ValidationErrors any
	// ProviderResponseID and ResponseModel, when the provider's lookup knows them.
	ProviderResponseID string
	ResponseModel      string
	// LockWait, when positive, bounds each wait for a row another
	// transaction holds (the job's, its attempt's, its key's): past it the
	// resolution gives up, writes nothing, and is ErrBusy (a *BusyError), to
	// be tried again later. Reconciliation sets it, so that a job held for
	// long (an operator's open transaction, a replica cut off mid-way) cannot
	// hold a reconciler for as long. 0 waits as long as ctx lets it.
	LockWait time.Duration
}

// ResolveAttempt resolves an unknown attempt. "failed": the attempt fails
// (`invalid` when the resolution carries the answer's ValidationErrors) and,
// when no unknown attempt remains, an unknown job goes back to `running` so that
// its orchestration continues (resume=true) — unless its routers have died
// RouterDeathLimit times in this round before sending its attempts, when it
// is failed instead (routerDeathsReason); while some remain, the job stays
// unknown and its error is rewritten to name only them. "succeeded": the
// attempt wins and the job succeeds with Result, through a conditional update
// that bumps `version`; other unknown attempts of the job become `lost`, and
// any still starting (never sent) are cancelled as not sent.
func (s *Store) ResolveAttempt(ctx context.Context, r Resolution) (resume bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		resume = false // a retried transaction's
		if r.LockWait > 0 {
			if _, err := tx.Exec(ctx, lockWaitSQL, lockWaitArg(r.LockWait)); err != nil {
				return err
			}
		}
		state, _, err := lockJob(ctx, tx, r.JobID, r.Owner)
		if err != nil {
			return err
		}
		var attemptID, attemptState string
		err = tx.QueryRow(ctx, `SELECT id::text, state FROM attempts WHERE job_id = $1 AND seq = $2 FOR UPDATE`,
			r.JobID, r.Seq).Scan(&attemptID, &attemptState)
		if err != nil {
			return fmt.Errorf("attempt %d: %w", r.Seq, notFound(err))
		}
		if attemptState != AttemptUnknown {
			return fmt.Errorf("%w: attempt %d is %s; only unknown attempts can be resolved", ErrStateConflict, r.Seq, attemptState)
		}
		note := map[string]any{"kind": "resolved", "outcome": r.Outcome, "message": r.Note}
		switch r.Outcome {
		case "failed":
			// A failure the provider billed (an answer that breaks the
			// contract, a refused or filtered completion) keeps its usage, as
			// the live attempt would have: its cost counts. A failure without
			// usage drops the router's estimate (race's estimatedUsage): the
			// provider did not do the work, and billed nothing the router
			// knows of.
			if _, err := tx.Exec(ctx, `UPDATE attempts SET state = CASE WHEN $7::jsonb IS NULL THEN 'failed' ELSE 'invalid' END,
					validation_errors = coalesce($7::jsonb, validation_errors),
					usage = CASE WHEN $3::jsonb IS NOT NULL THEN $3::jsonb
					             WHEN (usage ->> 'estimated')::boolean THEN NULL ELSE usage END,
					provider_response_id = coalesce(nullif($4, ''), provider_response_id),
					response_model = coalesce(nullif($5, ''), response_model),
					error = CASE WHEN $6::jsonb IS NULL
						THEN coalesce(error, '{}'::jsonb) || jsonb_build_object('resolution', $2::jsonb)
						ELSE $6::jsonb || jsonb_build_object('resolution',
							$2::jsonb || CASE WHEN error IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('replaced', error) END) END
				WHERE id = $1`, attemptID, jsonOrNil(note), jsonOrNil(r.Usage), r.ProviderResponseID, r.ResponseModel,
				jsonOrNil(r.Error), jsonOrNil(r.ValidationErrors)); err != nil {
				return err
			}
			if state != JobUnknown {
				return nil
			}
			inflight, unknown, err := attemptCounts(ctx, tx, r.JobID)
			if err != nil {
				return err
			}
			if unknown > 0 {
				// Still unknown, but its error named this attempt too:
				// followed, it would be refused (the attempt is no longer
				// unknown). It is rewritten to name those left, through
				// setJobState as every other write of a job's error, so the
				// change bumps `version` (which grows with every change of
				// the job: docs/api.md) and `updated_at`, and is announced.
				// The state stays `unknown`, so the outbox's trigger writes
				// no second job.unknown event.
				reason, err := unknownJobReason(ctx, tx, r.JobID)
				if err != nil {
					return err
				}
				return s.setJobState(ctx, tx, r.JobID, JobUnknown, reason)
			}
			if inflight > 0 {
				return nil
			}
			// A job whose routers keep dying before its send is failed
			// rather than run again (RouterDeathLimit).
			seqs, deaths, err := routerDeathsLocked(ctx, tx, r.JobID)
			if err != nil {
				return err
			}
			if deaths >= RouterDeathLimit {
				return s.setJobState(ctx, tx, r.JobID, JobFailed, routerDeathsReason(r.JobID, seqs, deaths))
			}
			resume = true
			// The job was parked `unknown` until someone resolved it (an
			// operator, or reconciliation after execution.reconcile_after):
			// it resumes as a new run, with a deadline of its own
			// (run_started_at, migration 0018), or a resolution made after
			// the route's deadline could never fail over.
			if _, err := tx.Exec(ctx, `UPDATE jobs SET run_started_at = now() WHERE id = $1`, r.JobID); err != nil {
				return err
			}
			return s.setJobState(ctx, tx, r.JobID, JobRunning, "")
		case "succeeded":
			if state != JobUnknown && state != JobRunning {
				return fmt.Errorf("%w: job is %s", ErrJobFinished, state)
			}
			tag, err := tx.Exec(ctx, `UPDATE jobs SET state = 'succeeded', result = $2, completed_by = $3,
					version = version + 1, error = NULL, updated_at = now(), finished_at = now(),
					lease_owner = NULL, lease_expires_at = NULL
				WHERE id = $1 AND completed_by IS NULL`, r.JobID, r.Result, attemptID)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("%w: job already completed", ErrJobFinished)
			}
			if _, err := tx.Exec(ctx, `UPDATE idempotency_keys SET expires_at = now() + $2::interval WHERE job_id = $1`,
				r.JobID, s.opt.KeyRetention); err != nil {
				return err
			}
			// A won attempt carries no failure: the error that made it
			// unknown (kind, outcome_unknown: true) is dropped, as a late
			// answer's win drops it (casSQL, winSQL); only the resolution
			// is kept, the one record of who resolved it and why.
			if _, err := tx.Exec(ctx, `UPDATE attempts SET state = 'won', usage = coalesce($2, usage),
					provider_response_id = coalesce(nullif($3, ''), provider_response_id),
					response_model = coalesce(nullif($4, ''), response_model),
					error = jsonb_build_object('resolution', $5::jsonb)
				WHERE id = $1`, attemptID, jsonOrNil(r.Usage), r.ProviderResponseID, r.ResponseModel, jsonOrNil(note)); err != nil {
				return err
			}
			// Other unknown attempts are lost; one still starting (created,
			// not yet sent) is cancelled as never sent (settleSiblingsSQL),
			// so that it is not sent for a job that has succeeded.
			if _, err := tx.Exec(ctx, `WITH l AS (
					UPDATE attempts SET `+settleSiblingsSQL+`
					WHERE job_id = $1 AND state IN ('unknown', 'starting') RETURNING id, provider, state)
				INSERT INTO race_events (job_id, attempt_id, kind, provider, detail)
				SELECT $1, id, 'lost', provider, 'unknown attempt settled as lost: the job was resolved from another attempt'
				FROM l WHERE state = 'lost'`,
				r.JobID); err != nil {
				return err
			}
			return notify(ctx, tx, r.JobID, JobSucceeded)
		default:
			return fmt.Errorf("outcome %q is not failed or succeeded", r.Outcome)
		}
	})
	if r.LockWait > 0 && Busy(err) {
		return false, &BusyError{What: "job " + r.JobID, Wait: r.LockWait, Err: err}
	}
	return resume, err
}

// ErrKeyRebound: a failed job's idempotency key expired and was claimed by a
// newer job, so the old job cannot be revived (two live jobs for one key).
var ErrKeyRebound = errors.New("the idempotency key now belongs to a newer job")

// rebindKeySQL takes the job's key back from expiry (expires_at = NULL: a live
// job's key never expires) only while the key is still bound to this job. The
// row lock it takes orders it against a concurrent claim of the expired key:
// whichever commits first wins, and the other sees it (the claim's ON CONFLICT
// re-checks expires_at; this re-checks job_id).
const rebindKeySQL = `UPDATE idempotency_keys k SET expires_at = NULL
	FROM jobs j
	WHERE j.id = $1 AND k.owner = j.owner AND k.operation = j.operation
	  AND k.idempotency_key = j.idempotency_key AND k.job_id = j.id`

// RetryJob turns a failed job back to running for a new round of attempts, on
// the caller's explicit request. The max_attempts bound and the route's
// deadline (a new run: Job.RunElapsed) count from here. A job whose key has
// meanwhile been claimed by a newer job is ErrKeyRebound. It waits at most
// transitionLockWait for a row another transaction holds (the job's, its
// key's), as a cancellation does: past that it is a *BusyError and nothing
// changed (it waited as long as the row was held, holding the request and a
// pool connection).
func (s *Store) RetryJob(ctx context.Context, owner, jobID string) error {
	return s.RetryJobWithin(ctx, owner, jobID, 0)
}

// RetryJobWithin is RetryJob for an owner with max_live_jobs maxLive (0: no
// limit): the failed job is made live again only while the owner has fewer
// than maxLive live jobs, counted under the owner's advisory lock that job
// creations take (liveLimitLockSQL), so that replicas together never go over
// it; past it nothing changes and the error is a *LiveLimitError. The lock is
// taken before the job's row, in the order the claims take them; but the
// retry first waits for the job's rows, holding no lock of the owner
// (awaitRetryRows), and then waits only batchLockWait for them with the lock
// held: held through a long wait for a row, the lock would stall every other
// creation of the owner, and the batches carrying them, for as long as a
// client resent the retry of a job whose row another transaction holds. A
// wait for the owner's lock that runs out is a *BusyError that is
// ErrLiveLimitBusy (the owner's check, not the job, was held).
func (s *Store) RetryJobWithin(ctx context.Context, owner, jobID string, maxLive int) error {
	_, err := s.RetryJobKeyed(ctx, owner, jobID, "", maxLive)
	return err
}

// RetryJobKeyed is RetryJobWithin for a retry that carries the caller's
// Idempotency-Key (key; "" for none). The key is written with the retry, on
// the job's locked row (jobs.retry_key, migration 0031), and a retry with the
// key of the job's latest retry changes nothing, whatever the job's state
// now: replayed is true and err nil (the caller answers the job as it
// stands). The key is compared under the job's row lock, so two resends of
// one retry at once make one round: the second waits for the first's commit
// and sees its key. A retry without a key, or with another key, is a new
// round as RetryJobWithin's, and records its key (none: NULL) as the
// latest. The key is the retry's own: it is not the job's idempotency key,
// and claims or extends nothing in idempotency_keys.
func (s *Store) RetryJobKeyed(ctx context.Context, owner, jobID, key string, maxLive int) (replayed bool, err error) {
	wait, rowWait := retryLockWait(), retryLockWait()
	if maxLive > 0 {
		if err := checkJobID(jobID); err != nil {
			return false, err
		}
		// Any other error of the wait wrote nothing either: the retry
		// meets it itself, and is answered as its own.
		if err := s.awaitRetryRows(ctx, owner, jobID, wait); Busy(err) {
			return false, jobBusy(err, jobID, wait)
		}
		rowWait = min(rowWait, batchLockWait)
	}
	err = retryBusy(s.inTx(ctx, func(tx pgx.Tx) error {
		replayed = false // a retried transaction's
		if maxLive > 0 {
			if err := lockLiveLimitWaiting(ctx, tx, owner, wait); err != nil {
				return err
			}
		}
		state, _, err := lockJobWaiting(ctx, tx, jobID, owner, rowWait)
		if err != nil {
			return err
		}
		if key != "" {
			// Before the state: the latest retry's round may be running,
			// or have ended, since; either way this resend is that retry.
			if err := tx.QueryRow(ctx, retryKeyHeldSQL, jobID, key).Scan(&replayed); err != nil {
				return fmt.Errorf("read the job's latest retry key: %w", notFound(err))
			}
			if replayed {
				return nil
			}
		}
		switch state {
		case JobFailed:
		case JobUnknown:
			seqs, err := attemptSeqs(ctx, tx, jobID, AttemptUnknown)
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: %s", ErrAttemptBlocked, resolveBeforeRetry(jobID, seqs))
		case JobPending, JobRunning:
			unknown, err := attemptSeqs(ctx, tx, jobID, AttemptUnknown)
			if err != nil {
				return err
			}
			if len(unknown) > 0 {
				return fmt.Errorf("%w: %s", ErrAttemptBlocked, resolveBeforeRetry(jobID, unknown))
			}
			starting, err := attemptSeqs(ctx, tx, jobID, AttemptStarting)
			if err != nil {
				return err
			}
			if len(starting) > 0 {
				return fmt.Errorf("%w: %s still starting (being sent); wait for the job to end, then retry it if it failed",
					ErrAttemptBlocked, isAre(starting))
			}
			return fmt.Errorf("%w: job is %s; only a failed job can be retried", ErrStateConflict, state)
		default:
			return fmt.Errorf("%w: job is %s", ErrJobFinished, state)
		}
		tag, err := tx.Exec(ctx, rebindKeySQL, jobID)
		if err != nil {
			return fmt.Errorf("rebind idempotency key: %w", err)
		}
		if tag.RowsAffected() != 1 {
			var key, newer string
			err := tx.QueryRow(ctx, `SELECT j.idempotency_key, coalesce(k.job_id::text, '')
				FROM jobs j LEFT JOIN idempotency_keys k
				  ON k.owner = j.owner AND k.operation = j.operation AND k.idempotency_key = j.idempotency_key
				WHERE j.id = $1`, jobID).Scan(&key, &newer)
			if err != nil {
				return fmt.Errorf("read idempotency key: %w", notFound(err))
			}
			if newer == "" {
				// The newer job, and its key row, deleted by retention since.
				return fmt.Errorf("%w: Idempotency-Key %q expired after job %s failed and was claimed by a newer job, "+
					"since deleted by retention; send the request with a new key", ErrKeyRebound, key, jobID)
			}
			return fmt.Errorf("%w: Idempotency-Key %q expired after job %s failed and was claimed by job %s; "+
				"read or retry that job, or send the request with a new key", ErrKeyRebound, key, jobID, newer)
		}
		// Past max_live_jobs the transaction rolls back: the key is not
		// rebound, the job stays failed. Checked after the 409s, which a
		// retry that could not happen anyway gets at the limit too.
		if maxLive > 0 {
			var live int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE owner = $1 AND state IN ('pending', 'running', 'unknown')`,
				owner).Scan(&live); err != nil {
				return err
			}
			if live >= maxLive {
				return &LiveLimitError{Owner: owner, Limit: maxLive}
			}
		}
		// A new run: its deadline counts from now (run_started_at, migration
		// 0018). It is the job's latest retry: its key (none: NULL) is the
		// one a resend is recognised by (retry_key, migration 0031).
		if _, err := tx.Exec(ctx, `UPDATE jobs SET attempt_base = (SELECT count(*) FROM attempts WHERE job_id = $1),
				run_started_at = now(), lease_owner = NULL, lease_expires_at = NULL, retry_key = nullif($2, '') WHERE id = $1`,
			jobID, key); err != nil {
			return err
		}
		return s.setJobState(ctx, tx, jobID, JobRunning, "")
	}), owner, jobID, rowWait)
	if err != nil {
		return false, err
	}
	return replayed, nil
}

// retryKeyHeldSQL says whether job $1's latest retry carried the key $2.
const retryKeyHeldSQL = `SELECT coalesce(retry_key = $2, false) FROM jobs WHERE id = $1`

// RetryKeyHeld says whether owner's job jobID was last retried with key (a
// retry's Idempotency-Key), read without a lock: a resend of that retry
// is answered with the job, not refused for the owner's live limit or for no
// eligible provider (the retry it repeats was made). RetryJobKeyed decides
// under the job's lock; this only lets a resend past checks made before it.
// ErrNotFound when owner has no such job.
func (s *Store) RetryKeyHeld(ctx context.Context, owner, jobID, key string) (bool, error) {
	if err := checkJobID(jobID); err != nil {
		return false, err
	}
	var held bool
	err := s.pool.QueryRow(ctx, `SELECT coalesce(retry_key = $3, false) FROM jobs WHERE id = $1 AND owner = $2`,
		jobID, owner, key).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("read the job's latest retry key: %w", notFound(err))
	}
	return held, nil
}

// retryKeyWrittenSQL is RetryKeyHeld's read of owner $2's job $1 and key $3,
// taking the row FOR SHARE: it conflicts with a retry's update of the row
// (FOR UPDATE, then a NO KEY UPDATE; FOR KEY SHARE would not wait for the
// latter), so it answers once no transaction is writing the row, from the
// row as that writer left it.
const retryKeyWrittenSQL = `SELECT coalesce(retry_key = $3, false) FROM jobs WHERE id = $1 AND owner = $2 FOR SHARE`

// AwaitRetryKeyHeld is RetryKeyHeld once no transaction is still writing the
// job's row (awaitWrites, as AwaitKeyHeld waits for a key's): for a keyed
// retry about to be refused before RetryJobKeyed with a final answer (too
// long for every window, no eligible provider, its prompt version not
// loaded; not the owner's live limit, whose 429 a resend replays once the
// retry is visible), whose answer says the job was not retried, while the retry it
// resends may be committing on another replica (its retry_key not yet
// visible to a plain read). A row still held past the wait is ErrBusy (a
// *BusyError naming the job): whether the retry was made is not known yet.
func (s *Store) AwaitRetryKeyHeld(ctx context.Context, owner, jobID, key string) (bool, error) {
	if err := checkJobID(jobID); err != nil {
		return false, err
	}
	var held bool
	err := s.awaitWrites(ctx, "job "+jobID, "job\x00"+jobID, func(ctx context.Context, wait time.Duration) error {
		conn, err := s.acquireBatchConn(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		// One implicit transaction: the bound applies to the read's lock.
		b := &pgx.Batch{}
		b.Queue(lockWaitSQL, lockWaitArg(wait))
		b.Queue(retryKeyWrittenSQL, jobID, owner, key)
		return lockWaitRow{br: conn.SendBatch(ctx, b)}.Scan(&held)
	})
	if err != nil {
		return false, fmt.Errorf("read the job's latest retry key: %w", notFound(err))
	}
	return held, nil
}
