package store

import (
	"context"
	"time"
)

// RenewLeases extends, in one statement, the orchestration leases that owner
// holds on jobIDs and the leases of those jobs' in-flight attempts that owner
// holds. Job rows are locked before attempt rows (the attempts update reads
// j), the order every other statement takes. Lease columns are in no index, so
// these updates are HOT. Rows another transaction has locked (a win, a
// settlement: they release the lease themselves, or the next tick renews it)
// are skipped rather than waited for: a renewal holding some rows while it
// waits for others would stall the wins behind it.
func (s *Store) RenewLeases(ctx context.Context, owner string, jobIDs []string, lease time.Duration) error {
	_, err := s.execLazy(ctx, `WITH j AS (
			UPDATE jobs SET lease_expires_at = now() + $3::interval
			WHERE id IN (SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND lease_owner = $2
			             AND state IN ('pending', 'running') FOR UPDATE SKIP LOCKED)
			RETURNING id)
		UPDATE attempts SET lease_expires_at = now() + $3::interval
		WHERE id IN (SELECT id FROM attempts WHERE job_id = ANY($1::uuid[]) AND lease_owner = $2
		             AND state IN ('starting', 'running') FOR UPDATE SKIP LOCKED)
		  AND (SELECT count(*) FROM j) >= 0`, jobIDs, owner, lease)
	if err == nil {
		s.opt.Observer.Batch("renew", len(jobIDs))
	}
	return err
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
