package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// RecentJobs returns the most recently created jobs of every owner, newest
// first, with all their attempts and race events. The operator dashboard
// reads RecentJobsCapped instead, which bounds the attempts per job.
func (s *Store) RecentJobs(ctx context.Context, limit int) ([]*Job, error) {
	return s.queryJobs(ctx, `SELECT `+jobColumns+` FROM jobs j ORDER BY j.created_at DESC, j.id LIMIT $1`, limit)
}

// queryJobs runs q (selecting jobColumns from jobs j) and returns its jobs
// with their attempts and race events, all as of one snapshot
// (readJobsInSnapshot).
func (s *Store) queryJobs(ctx context.Context, q string, args ...any) ([]*Job, error) {
	return s.readJobsInSnapshot(ctx, q, args, func(rows pgx.Rows) ([]*Job, error) {
		return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Job, error) { return scanJob(r) })
	})
}
