package store

import (
	"bytes"
	"context"
)

// JobHoldingKey returns owner's job that holds key for operation while the
// key is live (not expired), when the request that claimed it had fingerprint
// fp; ErrKeyReused when the key holds another request's job; ErrNotFound when
// no live key. It serves replays of requests that this replica can no longer
// turn into a job (their prompt version or route is gone after a deploy), so
// that a retry still reaches its job: the claim itself answers every other
// replay in the batch that creates jobs.
func (s *Store) JobHoldingKey(ctx context.Context, owner, operation, key string, fp []byte) (*Job, error) {
	var jobID string
	var held []byte
	err := s.pool.QueryRow(ctx, `SELECT job_id::text, fingerprint FROM idempotency_keys
		WHERE owner = $1 AND operation = $2 AND idempotency_key = $3 AND (expires_at IS NULL OR expires_at > now())`,
		owner, operation, key).Scan(&jobID, &held)
	if err != nil {
		return nil, notFound(err)
	}
	if !bytes.Equal(held, fp) {
		return nil, ErrKeyReused
	}
	return s.GetJob(ctx, owner, jobID)
}
