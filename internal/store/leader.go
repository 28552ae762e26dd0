package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// TryLead takes or renews the lease of role name for holder, on the database
// clock: it succeeds when nobody holds it, the holder is this one, or the
// previous holder's lease has expired. It returns whether holder now leads.
// It goes out on the lease's connection of its own, not on the pool the
// jobs use (see leaseConn): a busy pool does not delay it. After Close it
// is refused (ErrStoreClosed).
func (s *Store) TryLead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	var got string
	err := s.lease.run(ctx, ttl, false, func(c *pgx.Conn) error {
		err := c.QueryRow(ctx, `
			INSERT INTO leader_leases AS l (name, holder, expires_at) VALUES ($1, $2, now() + $3::interval)
			ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
			    WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
			RETURNING holder`, name, holder, ttl).Scan(&got)
		if errors.Is(err, pgx.ErrNoRows) { // another holder's unexpired lease
			got, err = "", nil
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("take leader lease %s: %w", name, err)
	}
	return got == holder, nil
}

// Resign gives up holder's lease of role name so another replica takes over at
// once. It closes the lease's connection afterwards: a replica resigns when it
// no longer seeks the lead (it steps down or stops).
func (s *Store) Resign(ctx context.Context, name, holder string) error {
	err := s.lease.run(ctx, 0, true, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `DELETE FROM leader_leases WHERE name = $1 AND holder = $2`, name, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("give up leader lease %s: %w", name, err)
	}
	return nil
}

// Leader returns who holds role name's unexpired lease ("" for nobody).
func (s *Store) Leader(ctx context.Context, name string) (string, error) {
	var h string
	err := s.pool.QueryRow(ctx, `SELECT holder FROM leader_leases WHERE name = $1 AND expires_at > now()`, name).Scan(&h)
	if err = notFound(err); err == ErrNotFound {
		return "", nil
	}
	return h, err
}
