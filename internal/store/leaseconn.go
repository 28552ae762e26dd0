package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNoFreeConnection: a leader lease call waited for a connection of the
// pool the jobs use and got none in time — the database, at its connection
// limit, had refused the lease a connection of its own. The database may
// answer at once: it is this replica's pool that is busy.
var ErrNoFreeConnection = errors.New("no free connection in this replica's database pool (the database refused the leader lease a connection of its own: it is at its connection limit)")

// The leader lease (TryLead, Resign) goes out on a connection of its own,
// not on the pool the jobs use, as readiness (Ping) does: a renewal that
// waited for a free pooled connection had its budget (a third of the lease)
// spent in the queue whenever the jobs held every connection for that long
// — a burst, a slow batch —, though the database answered at once; the
// replica gave up the lead, and under load every replica did, so nobody led
// (no attempt lease expired, nothing was adopted, reconciled or deleted).
//
// The connection is dialled from the pool's configuration on the first lease
// call, kept for the next ones, and closed on any error that may have left it
// unusable (no answer within the caller's ctx: a connection gone silent), on
// Resign (the replica no longer seeks the lead: it steps down or stops) and
// once unused for leaseConnIdle; the next call dials another. One lease call
// at a time uses it; the others wait for it within their own ctx. So a pool
// holds one such connection at most, beyond pool_max_conns. A database that
// refuses it for being at its connection limit answered: the call then waits
// for a pooled connection, within the same ctx, and a wait that runs out is
// ErrNoFreeConnection, not a database that did not answer.
var leaseConns = struct {
	sync.Mutex
	m map[*pgxpool.Pool]*leaseConn
}{m: map[*pgxpool.Pool]*leaseConn{}}

// leaseConn is one pool's lease connection. An entry lives while its
// connection is open or a call uses or waits for it, no longer.
type leaseConn struct {
	// slot is held by the call using conn (a one-slot semaphore).
	slot chan struct{}
	// users counts the calls holding or waiting for slot, and the idle
	// closer's try (leaseConns' mutex).
	users int
	// conn is the open connection, nil for none. Used by slot's holder;
	// written by it with leaseConns' mutex held too.
	conn *pgx.Conn
	// idle closes conn once unused for leaseConnIdle (nil: not armed).
	idle *time.Timer
}

// leaseConnIdle: a lease connection unused for this long is closed. Renewals
// come every third of the lease (5 s by default); an elector that stopped
// without resigning leaves no connection open for longer than this.
const leaseConnIdle = time.Minute

// leaseConnCloseWait bounds saying goodbye on a lease connection: one gone
// silent would hold the call (pgx has usually closed it already then).
const leaseConnCloseWait = time.Second

// withLeaseConn runs fn on the pool's lease connection, dialling one if none
// is open, within ctx; closeAfter closes the connection afterwards (Resign).
// fn returns the database's error as is (pgx.ErrNoRows is not an error here:
// fn handles it).
func (s *Store) withLeaseConn(ctx context.Context, closeAfter bool, fn func(c *pgx.Conn) error) error {
	lc := enterLeaseConn(s.pool)
	defer leaveLeaseConn(s.pool, lc)
	select {
	case lc.slot <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for the leader lease's connection, which another lease call of this replica is using: %w", context.Cause(ctx))
	}
	defer func() { <-lc.slot }()
	if lc.idle != nil {
		lc.idle.Stop()
	}
	for retried := false; ; retried = true {
		c, kept := lc.conn, lc.conn != nil
		if c == nil {
			var err error
			c, err = pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
			if err != nil {
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.TooManyConnections {
					return s.withPoolConn(ctx, err, fn)
				}
				return fmt.Errorf("connect to the database for the leader lease: %w", err)
			}
		}
		err := fn(c)
		// A database error leaves the connection usable, unless it was fatal
		// (pgx has closed it then); any other error — no answer within ctx
		// above all — may have left it anywhere in the protocol.
		var pgErr *pgconn.PgError
		broken := err != nil && (c.IsClosed() || !errors.As(err, &pgErr))
		if broken || closeAfter {
			closeLeaseConn(ctx, c)
		}
		leaseConns.Lock()
		if broken || closeAfter {
			lc.conn = nil
		} else {
			lc.conn = c
		}
		leaseConns.Unlock()
		if broken && kept && !retried && ctx.Err() == nil {
			// The kept connection died while unused (the database
			// restarted or failed over, a proxy's idle timeout, an
			// administrator ended the session): once more on a new one,
			// as the pool does after its liveness ping. Both calls are
			// safe to repeat.
			continue
		}
		if lc.conn != nil {
			if lc.idle == nil {
				lc.idle = time.AfterFunc(leaseConnIdle, func() { closeIdleLeaseConn(s.pool, lc) })
			} else {
				lc.idle.Reset(leaseConnIdle)
			}
		}
		return err
	}
}

// withPoolConn runs fn on a connection of the pool, for a database that
// refused the lease's own connection (refused) for being at its connection
// limit. A wait for a free one that outlasts ctx is ErrNoFreeConnection.
func (s *Store) withPoolConn(ctx context.Context, refused error, fn func(c *pgx.Conn) error) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: waited for one until the call's deadline (%v); raise the database's max_connections (or the role's CONNECTION LIMIT), or lower pool_max_conns: %w",
				ErrNoFreeConnection, refused, err)
		}
		return fmt.Errorf("take a pooled connection for the leader lease (the database refused one of its own: %v): %w", refused, err)
	}
	defer pc.Release()
	return fn(pc.Conn())
}

// enterLeaseConn returns pool's lease connection entry, counting the caller
// among its users.
func enterLeaseConn(pool *pgxpool.Pool) *leaseConn {
	leaseConns.Lock()
	defer leaseConns.Unlock()
	lc := leaseConns.m[pool]
	if lc == nil {
		lc = &leaseConn{slot: make(chan struct{}, 1)}
		leaseConns.m[pool] = lc
	}
	lc.users++
	return lc
}

// leaveLeaseConn drops the caller from lc's users, and lc with its last user
// when it holds no connection.
func leaveLeaseConn(pool *pgxpool.Pool, lc *leaseConn) {
	leaseConns.Lock()
	defer leaseConns.Unlock()
	lc.users--
	if lc.users == 0 && lc.conn == nil && leaseConns.m[pool] == lc {
		delete(leaseConns.m, pool)
	}
}

// closeLeaseConn closes a lease connection, saying goodbye within
// leaseConnCloseWait — at once when ctx has ended: the call got no answer
// on it, and would get none to the goodbye either.
func closeLeaseConn(ctx context.Context, c *pgx.Conn) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseConnCloseWait)
	defer cancel()
	if ctx.Err() != nil {
		cancel()
	}
	_ = c.Close(cctx)
}

// closeIdleLeaseConn closes lc's connection, unused for leaseConnIdle,
// unless a call is using it (that call re-arms the timer when it is done)
// or lc is gone (its connection closed meanwhile).
func closeIdleLeaseConn(pool *pgxpool.Pool, lc *leaseConn) {
	leaseConns.Lock()
	if leaseConns.m[pool] != lc {
		leaseConns.Unlock()
		return
	}
	lc.users++
	leaseConns.Unlock()
	defer leaveLeaseConn(pool, lc)
	select {
	case lc.slot <- struct{}{}:
	default:
		return
	}
	defer func() { <-lc.slot }()
	c := lc.conn
	if c == nil {
		return
	}
	closeLeaseConn(context.Background(), c)
	leaseConns.Lock()
	lc.conn = nil
	leaseConns.Unlock()
}
