package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// NotifyChannel is the LISTEN/NOTIFY channel on which every job state change is
// announced, with the job id as payload. It crosses replicas.
const NotifyChannel = "router_job"

// Completion is a valid output offered by an attempt.
type Completion struct {
	JobID              string
	AttemptID          string
	ReadVersion        int64 // the job version the attempt read when it started
	Result             json.RawMessage
	Usage              any
	ProviderResponseID string
	ResponseModel      string
	LatencyMS          int64
}

// casSQL is the compare-and-swap of SPEC §6.5: it succeeds only when the job is
// still at the version the attempt read and nobody has completed it. The win is
// one statement (one round trip, one commit): the job, its key's expiry, the
// winning attempt and the notification change together or not at all. Locks are
// taken job row first (the other updates read j), as everywhere else.
const casSQL = `
WITH j AS (
    UPDATE jobs SET state = 'succeeded', result = $3, completed_by = $4, version = version + 1,
        error = NULL, updated_at = now(), finished_at = now()
    WHERE id = $1 AND version = $2 AND completed_by IS NULL
    RETURNING id
), k AS (
    UPDATE idempotency_keys SET expires_at = now() + $5::interval
    WHERE job_id IN (SELECT id FROM j)
), a AS (
    UPDATE attempts SET state = 'won', usage = $6, provider_response_id = nullif($7, ''),
        response_model = nullif($8, ''), latency_ms = $9, finished_at = now(),
        lease_owner = NULL, lease_expires_at = NULL
    WHERE id = $4 AND EXISTS (SELECT 1 FROM j)
), u AS (
    UPDATE attempts SET state = 'lost'
    WHERE job_id = $1 AND id <> $4 AND state = 'unknown' AND EXISTS (SELECT 1 FROM j)
    RETURNING id, provider
), e AS (
    INSERT INTO race_events (job_id, attempt_id, kind, provider, detail)
    SELECT $1, id, 'lost', provider, 'unknown attempt settled as lost: another attempt won' FROM u
), n AS (
    SELECT pg_notify('` + NotifyChannel + `', id::text) FROM j
)
SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM n)`

// Complete offers a valid output through the compare-and-swap. won reports whether
// this attempt won; a loser is recorded `lost` (or `cancelled` when the job was
// cancelled) with a race event, and its payload is discarded.
func (s *Store) Complete(ctx context.Context, c Completion) (won bool, err error) {
	var n, notified int
	for try := 0; ; try++ {
		err = s.pool.QueryRow(ctx, casSQL, c.JobID, c.ReadVersion, c.Result, c.AttemptID, s.opt.KeyRetention,
			jsonOrNil(c.Usage), c.ProviderResponseID, c.ResponseModel, c.LatencyMS).Scan(&n, &notified)
		if try < 3 && rolledBack(err) {
			continue // the statement was rolled back whole: trying again is safe
		}
		break
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		// The commit may have happened even though we saw an error (a dropped
		// connection): the database decides, not our guess.
		if j, rerr := s.GetJobAny(context.WithoutCancel(ctx), c.JobID); rerr == nil && j.CompletedBy != nil {
			if *j.CompletedBy == c.AttemptID {
				return true, nil
			}
			// Someone else won: record this attempt as the loser.
			return false, s.inTx(context.WithoutCancel(ctx), func(tx pgx.Tx) error { return s.discard(ctx, tx, c) })
		}
		return false, fmt.Errorf("compare-and-swap: %w", err)
	}
	if err != nil {
		return false, err
	}
	if n == 1 {
		return true, nil
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var e error
		won, e = s.lateWin(ctx, tx, c)
		return e
	})
	return won, err
}

// lateWin handles a valid result whose compare-and-swap failed. The version
// moved, but when nobody has completed the job (it went `unknown` because this
// attempt's lease expired, or back to `running` after another attempt's
// resolution) and this attempt is still running or unknown, the result is the
// first valid completion and wins, under the job row's lock. Otherwise it is
// discarded with a race event.
func (s *Store) lateWin(ctx context.Context, tx pgx.Tx, c Completion) (bool, error) {
	state, _, err := lockJob(ctx, tx, c.JobID, "")
	if err != nil {
		return false, err
	}
	var attemptState string
	var completed bool
	if err := tx.QueryRow(ctx, `SELECT a.state, j.completed_by IS NOT NULL FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.id = $1`, c.AttemptID).Scan(&attemptState, &completed); err != nil {
		return false, notFound(err)
	}
	if completed || (state != JobRunning && state != JobUnknown) ||
		(attemptState != AttemptRunning && attemptState != AttemptUnknown) {
		return false, s.discard(ctx, tx, c)
	}
	var version int64
	if err := tx.QueryRow(ctx, `SELECT version FROM jobs WHERE id = $1`, c.JobID).Scan(&version); err != nil {
		return false, err
	}
	c.ReadVersion = version
	var n, notified int
	if err := tx.QueryRow(ctx, casSQL, c.JobID, c.ReadVersion, c.Result, c.AttemptID, s.opt.KeyRetention,
		jsonOrNil(c.Usage), c.ProviderResponseID, c.ResponseModel, c.LatencyMS).Scan(&n, &notified); err != nil {
		return false, err
	}
	return n == 1, nil
}

// discard records a valid result that lost the compare-and-swap.
func (s *Store) discard(ctx context.Context, tx pgx.Tx, c Completion) error {
	var jobState string
	if err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, c.JobID).Scan(&jobState); err != nil {
		return notFound(err)
	}
	attemptState, kind, detail := AttemptLost, "lost", "a valid result arrived after another attempt won; discarded"
	from := "'starting', 'running', 'unknown'"
	switch jobState {
	case JobSucceeded:
	case JobCancelled:
		attemptState, kind, detail = AttemptCancelled, "discarded", "a valid result arrived after the job was cancelled; discarded"
	default:
		// The attempt was settled otherwise (an operator resolved it as failed):
		// keep that, and record the result that came after.
		kind, detail = "discarded", "a valid result arrived after this attempt was settled; discarded"
		from = "'starting', 'running'"
	}
	_, err := tx.Exec(ctx, `UPDATE attempts SET state = $2, usage = $3, provider_response_id = nullif($4, ''),
			response_model = nullif($5, ''), latency_ms = $6, finished_at = coalesce(finished_at, now()),
			lease_owner = NULL, lease_expires_at = NULL
		WHERE id = $1 AND state IN (`+from+`)`,
		c.AttemptID, attemptState, jsonOrNil(c.Usage), c.ProviderResponseID, c.ResponseModel, c.LatencyMS)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO race_events (job_id, attempt_id, kind, provider, latency_ms, usage, detail)
		SELECT job_id, id, $2, provider, $3, $4, $5 FROM attempts WHERE id = $1`,
		c.AttemptID, kind, c.LatencyMS, jsonOrNil(c.Usage), detail)
	return err
}

func notify(ctx context.Context, tx pgx.Tx, jobID string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, jobID)
	return err
}

// rolledBack reports an error after which the database rolled the statement's
// transaction back whole (deadlock, serialization failure), so it can be run again.
func rolledBack(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}
