package store

import (
	"context"
	"time"
)

// ReleasedKeyJob is an earlier job of an owner that held an idempotency key
// until the key expired and a newer job took it over (released_keys).
type ReleasedKeyJob struct {
	JobID     string
	ExpiredAt time.Time // when its key expired, on the database's clock
}

// ReleasedKeyJobOf returns owner's job that held key for operation, created
// from the request with fingerprint fp, until the key expired and a newer job
// took it over — the latest such job when there are several; ErrNotFound when
// none (no job of this request ever held the key, or retention has deleted it
// since). It serves only the 409 of a key that holds another request's job
// (internal/api's keyReused): the caller resending its original request after
// its key expired and was reused is told where its job is. The owner's own
// job only, so naming it reveals nothing. Any caller gets that 409 at will
// (a key resent with another body), so the read is bounded: released_keys
// holds the key each released job held (migration 0033), and its index
// released_keys_key leads to that key's released jobs only, each joined to
// jobs by id (the job must still exist) for its fingerprint.
func (s *Store) ReleasedKeyJobOf(ctx context.Context, owner, operation, key string, fp []byte) (ReleasedKeyJob, error) {
	var out ReleasedKeyJob
	err := s.pool.QueryRow(ctx, `SELECT j.id::text, r.expired_at FROM released_keys r JOIN jobs j ON j.id = r.job_id
		WHERE r.owner = $1 AND r.operation = $2 AND r.idempotency_key = $3 AND j.fingerprint = $4
		ORDER BY r.expired_at DESC, r.job_id DESC LIMIT 1`,
		owner, operation, key, fp).Scan(&out.JobID, &out.ExpiredAt)
	if err != nil {
		return ReleasedKeyJob{}, notFound(err)
	}
	return out, nil
}
