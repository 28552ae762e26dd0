package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultRedeliveryWindow is how long an event may stay pending and still be
// delivered with the default webhook settings: retried until it is
// webhooks.retry_for (24h) old, the last retry up to webhooks.backoff_cap (1h)
// later, lasting up to webhooks.timeout (10s). Options.RedeliveryWindow
// defaults to it.
const DefaultRedeliveryWindow = 24*time.Hour + time.Hour + 10*time.Second

// DeleteExpiredJobs deletes at most batch jobs whose idempotency key expired
// more than after ago (the key still bound to the job, or released to a newer
// job — see released_keys), with their attempts, race events, events,
// deliveries and key rows, in one short transaction, and returns how many jobs
// it deleted. Only terminal jobs are touched: a live job's key never expires.
// A job with an event still pending (not yet delivered, being retried) and
// younger than Options.RedeliveryWindow is kept until the event is delivered
// or abandoned, or the window passes (a delivery that old is never retried:
// webhook.Worker abandons it at its next try). Jobs are locked first (lock order job, then its children)
// with SKIP LOCKED, so the cleaner never waits on a job in use, and
// lock_timeout bounds any other wait.
func (s *Store) DeleteExpiredJobs(ctx context.Context, after time.Duration, batch int) (int, error) {
	return s.deleteExpiredJobs(ctx, after, s.opt.RedeliveryWindow, batch)
}

// deleteExpiredJobs is DeleteExpiredJobs keeping jobs with an event pending for
// less than redelivery.
//
// Each expiry index (keys bound to their job, keys released to a newer job) is
// walked oldest first, and every reason to keep a job is checked, and the job
// locked, before that walk's LIMIT counts it: a kept job (its row not
// terminal, changed since its key expired, still holding a live key, an event
// pending, or locked by another transaction) never takes a batch's place.
// Checked after the LIMIT, as they were, the oldest kept jobs took every
// place of every pass, and nothing behind them was ever deleted.
//
// The pending check is a range scan of job_events_job (job_id, created_at)
// per candidate, reading the events without locking them: an event is written
// only with its job's state change, which locks the job row (taken here with
// SKIP LOCKED) and moves its updated_at out of range. Locking re-checks the
// job row's own conditions on its latest version, so a job revived or changed
// since the scan's snapshot is left alone.
func (s *Store) deleteExpiredJobs(ctx context.Context, after, redelivery time.Duration, batch int) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '2s'`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			WITH by_key AS (
			    SELECT j.id FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
			    WHERE k.expires_at IS NOT NULL AND k.expires_at <= now() - $1::interval
			      AND j.state IN ('succeeded', 'failed', 'cancelled')
			      AND j.updated_at <= now() - $1::interval
			      AND NOT EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.id
			                      AND e.created_at > now() - $3::interval AND e.status = 'pending')
			    ORDER BY k.expires_at LIMIT $2
			    FOR UPDATE OF j SKIP LOCKED
			), by_release AS (
			    SELECT j.id FROM released_keys r JOIN jobs j ON j.id = r.job_id
			    WHERE r.expired_at <= now() - $1::interval
			      AND j.state IN ('succeeded', 'failed', 'cancelled')
			      AND j.updated_at <= now() - $1::interval
			      AND NOT EXISTS (SELECT 1 FROM idempotency_keys k2
			                      WHERE k2.job_id = j.id AND (k2.expires_at IS NULL OR k2.expires_at > now() - $1::interval))
			      AND NOT EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.id
			                      AND e.created_at > now() - $3::interval AND e.status = 'pending')
			    ORDER BY r.expired_at LIMIT $2
			    FOR UPDATE OF j SKIP LOCKED
			)
			SELECT id::text FROM (SELECT id FROM by_key UNION SELECT id FROM by_release) c
			LIMIT $2`, after, batch, redelivery)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			return err
		}
		for _, q := range []string{
			`DELETE FROM race_events WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM attempts WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM job_events WHERE job_id = ANY($1::uuid[])`, // deliveries cascade
			`DELETE FROM idempotency_keys WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM released_keys WHERE job_id = ANY($1::uuid[])`,
			`DELETE FROM jobs WHERE id = ANY($1::uuid[])`,
		} {
			if _, err := tx.Exec(ctx, q, ids); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete expired jobs: %w", err)
	}
	return n, nil
}
