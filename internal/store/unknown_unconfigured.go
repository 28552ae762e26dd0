package store

import (
	"context"
	"time"
)

// ListUnknownAttemptsOff lists up to limit attempts that have been unknown
// for at least minAge (database clock), of jobs not ended, on providers
// (targets) other than those in configured: the attempts that this router's
// reconciliation, which looks up only the targets it configures
// (ListUnknownAttempts), never looks at — their target was removed from its
// configuration (a deploy), so only an operator, or a leader configuring the
// target again, resolves them. Oldest first.
func (s *Store) ListUnknownAttemptsOff(ctx context.Context, configured []string, minAge time.Duration, limit int) ([]UnknownAttempt, error) {
	if configured == nil {
		configured = []string{} // <> ALL of an empty array is true; of NULL, null
	}
	rows, err := s.pool.Query(ctx, `SELECT a.job_id::text, a.id::text, a.provider, j.operation, j.prompt_version, a.seq
		FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.state = 'unknown' AND a.provider <> ALL($1) AND j.state IN ('unknown', 'running')
		  AND a.finished_at <= now() - $3::interval
		ORDER BY a.finished_at LIMIT $2`, configured, limit, minAge)
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
