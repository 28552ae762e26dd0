package store

import (
	"context"
	"time"
)

// Now reads the database's clock (now(): every time the router compares with
// a row's timestamp comes from the same clock as the row).
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := s.pool.QueryRow(ctx, `SELECT now()`).Scan(&t)
	return t, err
}
