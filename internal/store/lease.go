package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// RenewLeases extends, in one statement, the orchestration leases that owner
// holds on jobIDs and the leases of those jobs' in-flight attempts that owner
// holds, and returns the attempts it renewed: each such attempt's lease now
// runs out no sooner than lease after the statement was sent. Job rows are
// locked before attempt rows (the attempts update reads j), the order every
// other statement takes. Lease columns are in no index, so these updates are
// HOT. Rows another transaction has locked (a win, a settlement: they release
// the lease themselves, or the next tick renews it) are skipped rather than
// waited for: a renewal holding some rows while it waits for others would
// stall the wins behind it. A skipped attempt is not among those returned.
//
// Its commit, as a lease's always was, does not wait for the WAL flush
// (lazyCommitSQL): a database that crashes may lose it, and an attempt
// returned here then has the lease it had before.
func (s *Store) RenewLeases(ctx context.Context, owner string, jobIDs []string, lease time.Duration) (renewed []RenewedAttempt, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(lazyCommitSQL)
	b.Queue(`WITH j AS (
			UPDATE jobs SET lease_expires_at = now() + $3::interval
			WHERE id IN (SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND lease_owner = $2
			             AND state IN ('pending', 'running') FOR UPDATE SKIP LOCKED)
			RETURNING id)
		UPDATE attempts SET lease_expires_at = now() + $3::interval
		WHERE id IN (SELECT id FROM attempts WHERE job_id = ANY($1::uuid[]) AND lease_owner = $2
		             AND state IN ('starting', 'running') FOR UPDATE SKIP LOCKED)
		  AND (SELECT count(*) FROM j) >= 0
		RETURNING job_id::text, id::text`, jobIDs, owner, lease)
	b.Queue("COMMIT")
	err = func() error {
		br := s.pool.SendBatch(ctx, b)
		defer br.Close() // the pool discards a connection left in a transaction
		for range 2 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			var r RenewedAttempt
			if err := rows.Scan(&r.JobID, &r.AttemptID); err != nil {
				rows.Close()
				return err
			}
			renewed = append(renewed, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = br.Exec() // COMMIT: what was renewed is known only once it is done
		return err
	}()
	if err != nil {
		return nil, err
	}
	s.opt.Observer.Batch("renew", len(jobIDs))
	return renewed, nil
}

// RenewedAttempt is an attempt whose lease RenewLeases renewed.
type RenewedAttempt struct {
	JobID, AttemptID string
}

// UnknownAttempt identifies an unknown attempt for reconciliation.
type UnknownAttempt struct {
	JobID, AttemptID, Provider, Operation, PromptVersion string
	Seq                                                  int
}

// ListUnknownAttempts lists up to limit attempts on the given providers that
// have been unknown for at least minAge (database clock).
func (s *Store) ListUnknownAttempts(ctx context.Context, providers []string, minAge time.Duration, limit int) ([]UnknownAttempt, error) {
	rows, err := s.pool.Query(ctx, `SELECT a.job_id::text, a.id::text, a.provider, j.operation, j.prompt_version, a.seq
		FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.state = 'unknown' AND a.provider = ANY($1) AND j.state IN ('unknown', 'running')
		  AND a.finished_at <= now() - $3::interval
		ORDER BY a.finished_at LIMIT $2`, providers, limit, minAge)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UnknownAttempt
	for rows.Next() {
		var u UnknownAttempt
		if err := rows.Scan(&u.JobID, &u.AttemptID, &u.Provider, &u.Operation, &u.PromptVersion, &u.Seq); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
