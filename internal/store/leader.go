package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrLeaseRowHeld: another database session holds the leader lease's row
// (leader_leases) — an operator's transaction left open on it in psql, or one
// of a client cut off in the middle of it, which PostgreSQL keeps until it
// notices the client is gone — and did not release it within the lease
// call's bounded wait for it (leaseLockWait). The database answered: it is
// not silent, and the lease's connection is kept. No replica can renew or
// take the lease until that session's transaction ends, so none leads
// meanwhile. The error says which row, and how to find the session.
var ErrLeaseRowHeld = errors.New("another database session holds the leader lease's row")

// leaseRowHeld is err, when it is a wait for role name's lease row that ran
// into its bound wait (lock_not_available), as ErrLeaseRowHeld saying which
// row and how to find its holder; any other err as it is.
func leaseRowHeld(err error, name string, wait time.Duration) error {
	if err == nil || !Busy(err) {
		return err
	}
	return fmt.Errorf("%w (leader_leases, name = '%s'), and did not release it within %s: no replica leads until that session's transaction ends; "+
		"find it in pg_locks (a granted lock on relation leader_leases) joined to pg_stat_activity, usually a session 'idle in transaction' (docs/operations.md, Sessions that hold rows), "+
		"then end its transaction (COMMIT or ROLLBACK in its client, or pg_terminate_backend(pid)): %w",
		ErrLeaseRowHeld, name, wait, err)
}

// leaseResignLockWait bounds a resignation's wait for a held lease row when
// its ctx has no deadline (leaseLockWait).
const leaseResignLockWait = 5 * time.Second

// leaseLockWait is how long a lease call waits for the lease's row when
// another session holds it (lock_timeout): d, or half the time ctx has left
// if that is less — the elector gives each call a third of the lease — so a
// held row is reported as held (ErrLeaseRowHeld) before the caller's
// deadline, not as a database that did not answer, which would also close
// the lease's connection for nothing.
func leaseLockWait(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	return max(d.Truncate(time.Millisecond), time.Millisecond) // as lock_timeout takes it (lockWaitArg)
}

// TryLead takes or renews the lease of role name for holder, on the database
// clock: it succeeds when nobody holds it, the holder is this one, or the
// previous holder's lease has expired. It returns whether holder now leads.
// It goes out on the lease's connection of its own, not on the pool the
// jobs use (see leaseConn): a busy pool does not delay it. It waits for the
// lease's row, when another session holds it, a sixth of ttl at most (less
// if ctx leaves less: leaseLockWait); past that the error is
// ErrLeaseRowHeld. After Close it is refused (ErrStoreClosed).
func (s *Store) TryLead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	var got string
	var wait time.Duration
	err := s.lease.run(ctx, ttl, false, func(c *pgx.Conn) error {
		// The bound and the upsert in one batch: one implicit transaction,
		// and no round trip of its own for the bound. It is taken as the
		// call is sent: a wait for the lease's connection spent some of ctx.
		wait = leaseLockWait(ctx, ttl/6)
		b := &pgx.Batch{}
		b.Queue(lockWaitSQL, lockWaitArg(wait))
		b.Queue(`
			INSERT INTO leader_leases AS l (name, holder, expires_at) VALUES ($1, $2, now() + $3::interval)
			ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
			    WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
			RETURNING holder`, name, holder, ttl)
		err := lockWaitRow{br: c.SendBatch(ctx, b)}.Scan(&got)
		if errors.Is(err, pgx.ErrNoRows) { // another holder's unexpired lease
			got, err = "", nil
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("take leader lease %s: %w", name, leaseRowHeld(err, name, wait))
	}
	return got == holder, nil
}

// Resign gives up holder's lease of role name so another replica takes over at
// once. It closes the lease's connection afterwards: a replica resigns when it
// no longer seeks the lead (it steps down or stops). It waits for the lease's
// row, when another session holds it, half the time ctx leaves it at most
// (leaseResignLockWait without a deadline); past that the error is
// ErrLeaseRowHeld.
func (s *Store) Resign(ctx context.Context, name, holder string) error {
	var wait time.Duration
	err := s.lease.run(ctx, 0, true, func(c *pgx.Conn) error {
		wait = leaseLockWait(ctx, leaseResignLockWait)
		b := &pgx.Batch{}
		b.Queue(lockWaitSQL, lockWaitArg(wait))
		b.Queue(`DELETE FROM leader_leases WHERE name = $1 AND holder = $2`, name, holder)
		return c.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("give up leader lease %s: %w", name, leaseRowHeld(err, name, wait))
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
