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
	"github.com/jackc/puddle/v2"
)

// ErrNoFreeConnection: a leader lease call waited for a connection of the
// pool the jobs use and got none in time — the database, at its connection
// limit, had refused the lease a connection of its own. The database may
// answer at once: it is this replica's pool that is busy.
var ErrNoFreeConnection = errors.New("no free connection in this replica's database pool (the database refused the leader lease a connection of its own: it is at its connection limit)")

// ErrPoolClosed: a leader lease call was made on a Store whose pool has been
// closed. The lease's own connection is dialled from the pool's
// configuration, so it could still be opened; it is not, as nothing would
// close it (the replica is shutting down, or the Store is no longer used).
var ErrPoolClosed = errors.New("the database pool of this Store is closed (pgxpool's Close was called): stop the leader elector (or Resign) before closing the pool, or make the lease calls on a Store whose pool is open")

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
// Resign (the replica no longer seeks the lead: it steps down or stops),
// once unused for the lease's ttl (at least leaseConnIdleMin), and once its
// pool is closed; the next call dials another, unless the pool is closed:
// it is refused then (ErrPoolClosed). One lease call at a time uses it; the
// others wait for it within their own ctx. So a pool holds one such
// connection at most, beyond pool_max_conns. A database that refuses it for
// being at its connection limit answered: the call then waits for a pooled
// connection, within the same ctx, and a wait that runs out is
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
	// users counts the calls holding or waiting for slot, and the watch's
	// try (leaseConns' mutex).
	users int
	// conn is the open connection, nil for none. Used by slot's holder;
	// written by it with leaseConns' mutex held too.
	conn *pgx.Conn
	// The fields below are guarded by leaseConns' mutex.
	//
	// idleAfter: conn is closed once unused for this long — the ttl of the
	// last TryLead, at least leaseConnIdleMin.
	idleAfter time.Duration
	// lastUsed is when a call last finished with conn.
	lastUsed time.Time
	// watch looks at conn every leaseConnWatch while it is open (nil: not
	// armed): see watchLeaseConn.
	watch *time.Timer
	// poolClosed: the pool was found closed; calls are refused.
	poolClosed bool
}

// leaseConnIdleMin is the shortest time a lease connection is kept unused.
// A live elector renews every third of its ttl, so a connection unused for a
// whole ttl serves nobody who still leads (that lease has expired): it is
// closed then, not after a fixed time that a short lease would outlast many
// times over. The floor keeps a very short lease (tests, sub-second ttl),
// whose renewals a busy scheduler can delay by more than the ttl, from
// dialling a connection on every call; the watch's period is its resolution.
const leaseConnIdleMin = time.Second

// leaseConnWatch is how often an open lease connection is looked at (see
// watchLeaseConn): an idle or orphaned one is closed within this much of the
// moment it became so.
const leaseConnWatch = time.Second

// leaseConnCloseWait bounds saying goodbye on a lease connection: one gone
// silent would hold the call (pgx has usually closed it already then). It
// bounds the closed-pool probe of an empty pool too (poolIsClosed).
const leaseConnCloseWait = time.Second

// withLeaseConn runs fn on the pool's lease connection, dialling one if none
// is open, within ctx; closeAfter closes the connection afterwards (Resign).
// ttl, when positive (TryLead), is the lease's: an unused connection is
// closed after it. fn returns the database's error as is (pgx.ErrNoRows is
// not an error here: fn handles it). A call on a closed pool is refused with
// ErrPoolClosed.
func (s *Store) withLeaseConn(ctx context.Context, ttl time.Duration, closeAfter bool, fn func(c *pgx.Conn) error) error {
	lc := enterLeaseConn(s.pool)
	defer leaveLeaseConn(s.pool, lc)
	select {
	case lc.slot <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for the leader lease's connection, which another lease call of this replica is using: %w", context.Cause(ctx))
	}
	defer func() { <-lc.slot }()
	leaseConns.Lock()
	if ttl > 0 {
		lc.idleAfter = max(ttl, leaseConnIdleMin)
	}
	refused := lc.poolClosed
	leaseConns.Unlock()
	// Dialled from the pool's configuration, the connection would open as
	// well from a closed pool, and outlive it; a kept one would answer.
	if refused || poolIsClosed(ctx, s.pool) {
		leaseConns.Lock()
		lc.poolClosed = true
		leaseConns.Unlock()
		dropLeaseConn(ctx, lc)
		return ErrPoolClosed
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
		leaseConns.Lock()
		lc.conn = c
		closeNow := broken || closeAfter || lc.poolClosed // the watch found the pool closed meanwhile
		leaseConns.Unlock()
		if closeNow {
			dropLeaseConn(ctx, lc)
		}
		if broken && kept && !retried && ctx.Err() == nil {
			// The kept connection died while unused (the database
			// restarted or failed over, a proxy's idle timeout, an
			// administrator ended the session): once more on a new one,
			// as the pool does after its liveness ping. Both calls are
			// safe to repeat.
			continue
		}
		if !closeNow {
			leaseConns.Lock()
			lc.lastUsed = time.Now()
			if lc.idleAfter <= 0 {
				lc.idleAfter = leaseConnIdleMin
			}
			if lc.watch == nil {
				lc.watch = time.AfterFunc(leaseConnWatch, func() { watchLeaseConn(s.pool, lc) })
			}
			leaseConns.Unlock()
		}
		return err
	}
}

// dropLeaseConn closes lc's connection, if open, and stops its watch. The
// caller holds lc's slot.
func dropLeaseConn(ctx context.Context, lc *leaseConn) {
	leaseConns.Lock()
	c := lc.conn
	lc.conn = nil
	if lc.watch != nil {
		lc.watch.Stop()
		lc.watch = nil
	}
	leaseConns.Unlock()
	if c != nil {
		closeLeaseConn(ctx, c)
	}
}

// poolIsClosed reports whether pool has been closed, asking the database
// nothing when the pool holds a connection — an open pool of Connect keeps
// pool_min_conns (4 by default) warm, so a lease call pays one look at the
// pool's counts, no round trip. pgxpool says a pool is closed
// only by refusing an Acquire (puddle.ErrClosedPool), and an Acquire would
// queue behind the jobs on a busy pool, or ping an idle connection. A pool
// holding a connection (idle, in use or being opened) is open — or closing:
// Close waits for the connections in use, and the next look finds it
// closed. A pool holding none is asked with an Acquire, within
// leaseConnCloseWait: a closed one refuses it at once; an open one opens a
// connection, which it keeps for the jobs. An Acquire that fails otherwise
// (the database did not answer in time, or ctx ended) does not say the
// pool is closed.
func poolIsClosed(ctx context.Context, pool *pgxpool.Pool) bool {
	if pool.Stat().TotalConns() > 0 {
		return false
	}
	actx, cancel := context.WithTimeout(ctx, leaseConnCloseWait)
	defer cancel()
	c, err := pool.Acquire(actx)
	if err == nil {
		c.Release()
		return false
	}
	return errors.Is(err, puddle.ErrClosedPool)
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

// watchLeaseConn, run every leaseConnWatch while lc's connection is open,
// closes it once its pool is closed (no further lease call may come to do
// it: the replica is shutting down) or once unused for lc.idleAfter (an
// elector that stopped without resigning), unless a call is using it (the
// watch looks again later) or lc is gone (its connection closed meanwhile).
func watchLeaseConn(pool *pgxpool.Pool, lc *leaseConn) {
	leaseConns.Lock()
	if leaseConns.m[pool] != lc || lc.watch == nil {
		leaseConns.Unlock()
		return
	}
	lc.users++
	leaseConns.Unlock()
	defer leaveLeaseConn(pool, lc)
	closed := poolIsClosed(context.Background(), pool)
	leaseConns.Lock()
	if closed {
		lc.poolClosed = true // a call holding the slot closes the connection when done
	}
	leaseConns.Unlock()
	select {
	case lc.slot <- struct{}{}:
	default:
		leaseConns.Lock()
		if lc.watch != nil {
			lc.watch.Reset(leaseConnWatch)
		}
		leaseConns.Unlock()
		return
	}
	defer func() { <-lc.slot }()
	leaseConns.Lock()
	idle := lc.conn != nil && time.Since(lc.lastUsed) >= lc.idleAfter
	if !closed && !idle && lc.conn != nil && lc.watch != nil {
		lc.watch.Reset(leaseConnWatch)
		leaseConns.Unlock()
		return
	}
	leaseConns.Unlock()
	dropLeaseConn(context.Background(), lc)
}

// closeIdleLeaseConn closes lc's connection, as the watch does once it has
// been unused for lc.idleAfter, unless a call is using it or lc is gone.
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
	dropLeaseConn(context.Background(), lc)
}
