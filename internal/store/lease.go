package store

import (
	"context"
	"time"
)

// RenewLease extends an in-flight attempt's lease, if owner still holds it.
// ok=false means the attempt is no longer in flight or no longer ours.
func (s *Store) RenewLease(ctx context.Context, attemptID, owner string, lease time.Duration) (ok bool, err error) {
	tag, err := s.pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() + $3::interval
		WHERE id = $1 AND lease_owner = $2 AND state IN ('starting', 'running')`, attemptID, owner, lease)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}
