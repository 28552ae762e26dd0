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

// LiveJobCounts counts every owner's jobs that are not terminal, by state
// (pending, running, unknown; a state with none is 0): the operator's view of
// what is in flight and, above all, what waits for a resolution (unknown
// jobs never expire). The partial index jobs_owner_live holds exactly them.
func (s *Store) LiveJobCounts(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT state, count(*) FROM jobs
		WHERE state IN ('pending', 'running', 'unknown') GROUP BY state`)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{JobPending: 0, JobRunning: 0, JobUnknown: 0}
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			rows.Close()
			return nil, err
		}
		out[state] = n
	}
	return out, rows.Err()
}
