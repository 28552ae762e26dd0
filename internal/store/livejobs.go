package store

import "context"

// CountLiveJobs counts owner's jobs that are not terminal (pending, running or
// unknown): what a per-owner max_live_jobs limit bounds (SPEC §17).
func (s *Store) CountLiveJobs(ctx context.Context, owner string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM jobs
		WHERE owner = $1 AND state IN ('pending', 'running', 'unknown')`, owner).Scan(&n)
	return n, err
}
