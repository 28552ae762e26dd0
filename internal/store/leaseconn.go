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

// ErrNoFreeConnection: a lease call (the leader lease's, or the renewal of
// the job and attempt leases) waited for a connection of the pool the jobs
// use and got none in time — the database, at its connection limit, had
// refused the call a connection of its own. The database may answer at once:
// it is this replica's pool that is busy.
var ErrNoFreeConnection = errors.New("no free connection in this replica's database pool (the database refused the lease a connection of its own: it is at its connection limit)")

// ErrStoreClosed: a lease call (TryLead, Resign, RenewLeases) was made on a
// Store after its Close. The lease's own connection is dialled from the
// pool's configuration, so it could still be opened; it is not, as nothing
// would close it (the replica is shutting down, or the Store is no longer
// used).
var ErrStoreClosed = errors.New("this Store is closed (Store.Close was called, as its database pool is being closed): no lease call is made on it; " +
	"stop the leader elector (StepDown, or end its Run) and the race runner (Runner.Stop, which ends its lease keeper) before closing the Store, or make the lease calls on an open Store")

// The leader lease (TryLead, Resign) goes out on a connection of its own,
// not on the pool the jobs use, as readiness (Ping) does: a renewal that
// waited for a free pooled connection had its budget (a third of the lease)
// spent in the queue whenever the jobs held every connection for that long
// — a burst, a slow batch —, though the database answered at once; the
// replica gave up the lead, and under load every replica did, so nobody led
// (no attempt lease expired, nothing was adopted, reconciled or deleted).
// The renewal of the job and attempt leases (RenewLeases) has one too, for
// the same reason, and its own (Store.renew): waiting in the pool's queue, a
// live replica's leases lapsed and the leader marked its calls in flight
// `unknown`; and a renewal does not wait behind a leader lease call, nor one
// of those behind a renewal.
//
// The connection is dialled from the pool's configuration on the first lease
// call, kept for the next ones, and closed on any error that may have left it
// unusable (no answer within the caller's ctx: a connection gone silent), on
// Resign (the replica no longer seeks the lead: it steps down or stops),
// once unused for the lease's ttl (at least leaseConnIdleMin: an elector
// that stopped without resigning), and on Close; the next call dials
// another, unless the Store is closed: it is refused then (ErrStoreClosed).
// One lease call at a time uses it; the others wait for it within their own
// ctx. So a Store holds one such connection per leaseConn at most (two),
// beyond pool_max_conns (a replica makes one Store for its pool). A
// database that refuses it for being at its connection limit answered: the
// call then waits for a pooled connection, within the same ctx, and a wait
// that runs out is ErrNoFreeConnection, not a database that did not answer.
type leaseConn struct {
	// what names the calls, in errors ("the leader lease").
	what string
	// pool is the Store's: the connection is dialled from its
	// configuration, and a refused dial waits for one of its connections.
	pool *pgxpool.Pool
	// slot is held by the call using conn, by the idle timer's check and
	// by Close closing conn (a one-slot semaphore).
	slot chan struct{}
	// mu guards the fields below. conn is used by slot's holder only, and
	// written by it with mu held too.
	mu sync.Mutex
	// conn is the open connection, nil for none.
	conn *pgx.Conn
	// idleAfter: conn is closed once unused for this long — the ttl of the
	// last call that gave one (TryLead's, RenewLeases' lease), at least
	// leaseConnIdleMin.
	idleAfter time.Duration
	// lastUsed is when a call last finished with conn.
	lastUsed time.Time
	// idle fires once conn may have been unused for idleAfter
	// (closeIdle); armed while conn is open, nil otherwise.
	idle *time.Timer
	// closed: Close was called; calls are refused.
	closed bool
}

// leaseConnIdleMin is the shortest time a lease connection is kept unused.
// A live elector renews every third of its ttl, so a connection unused for a
// whole ttl serves nobody who still leads (that lease has expired): it is
// closed then, not after a fixed time that a short lease would outlast many
// times over. The floor keeps a very short lease (tests, sub-second ttl),
// whose renewals a busy scheduler can delay by more than the ttl, from
// dialling a connection on every call.
const leaseConnIdleMin = time.Second

// leaseConnCloseWait bounds saying goodbye on a lease connection: one gone
// silent would hold the call (pgx has usually closed it already then).
const leaseConnCloseWait = time.Second

// init readies lc, the connection of what's calls beside pool.
func (lc *leaseConn) init(pool *pgxpool.Pool, what string) {
	lc.pool, lc.what = pool, what
	lc.slot = make(chan struct{}, 1)
}

// Close closes the Store's lease connections (the leader lease's and the
// lease renewal's) and refuses every lease call from now on
// (ErrStoreClosed). Call it when the pool is closed, before pgxpool's Close,
// once the leader elector has stopped (StepDown, or the end of its Run,
// which resigns) and the race runner with it (Runner.Stop waits for its
// lease keeper): a resignation after Close is refused, left to the lease's
// expiry. A lease call in flight is not cut: it closes the connection as it
// ends.
//
// It first waits for the batches under way (group: the success path's
// claims and wins, webhook deliveries' writes and reads): a batch run by a
// leader goroutine, nobody's call, that had not got its connection when the
// pool is closed would fail, and a win in it be lost (its attempt `unknown`
// at lease expiry), though its caller may have stopped waiting. Items queued
// while Close waits are waited for too; one queued after Close returned is
// still run, on what is left of the pool (if closed, its batch fails and its
// callers are told). Then it waits for the writes the Store runs in the
// background, past the call that started them (background): the hand-over
// of a claim whose answer was lost (handOverLostClaim), a wake of webhook
// deliveries (one a batch of wins asked for while Close waited too). A job
// created while the replica stops, its claim's answer lost, is handed over
// on the open pool rather than left to become `unknown` at lease expiry.
// Both waits share one bound (backgroundCloseWait): batches still under way
// past it are logged, naming their groups, and left to run (each within
// execTimeout); background writes still running are logged and cancelled,
// and have returned when Close does (up to backgroundCancelWait more). No
// background write is started after the batches' wait.
//
// Close does not close the pool (the caller's), nor wait for a readiness
// probe under way (Ping's connection, its own, closed as its ping ends). It
// may be called more than once.
func (s *Store) Close() {
	wait := time.Duration(backgroundCloseWaitNS.Load())
	deadline := time.Now().Add(wait)
	drainGroups(deadline, wait, s.opt.Log, &s.paths, &s.deliveries, &s.eventReads)
	s.bg.close(max(time.Until(deadline), 0), time.Duration(backgroundCancelWaitNS.Load()), s.opt.Log)
	s.lease.close()
	s.renew.close()
}

// close closes lc's connection and refuses its calls from now on.
func (lc *leaseConn) close() {
	lc.mu.Lock()
	lc.closed = true
	lc.mu.Unlock()
	select {
	case lc.slot <- struct{}{}:
		defer lc.release()
		lc.drop(context.Background())
	default: // a lease call, or the idle timer, holds the connection: it is closed as the slot is released (release)
	}
}

// run runs fn on lc's connection, dialling one if none is open, within ctx;
// closeAfter closes the connection afterwards (Resign). ttl, when positive
// (TryLead, RenewLeases), is the lease's: an unused connection is closed
// after it. fn returns the database's error (pgx.ErrNoRows is not an error
// here: fn handles it), wrapped or not. A call on a closed Store is refused
// with ErrStoreClosed.
func (lc *leaseConn) run(ctx context.Context, ttl time.Duration, closeAfter bool, fn func(c *pgx.Conn) error) error {
	select {
	case lc.slot <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for %s's connection, which another call of this replica is using: %w", lc.what, context.Cause(ctx))
	}
	defer lc.release()
	lc.mu.Lock()
	if ttl > 0 {
		lc.idleAfter = max(ttl, leaseConnIdleMin)
	}
	closed := lc.closed
	lc.mu.Unlock()
	if closed {
		return ErrStoreClosed
	}
	for retried := false; ; retried = true {
		c, kept := lc.conn, lc.conn != nil
		if c == nil {
			var err error
			c, err = lc.dial(ctx)
			if err != nil {
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.TooManyConnections {
					return lc.withPoolConn(ctx, err, fn)
				}
				return fmt.Errorf("connect to the database for %s (a connection of its own, beside the pool): %w", lc.what, err)
			}
		}
		err := fn(c)
		// A database error leaves the connection usable, unless it was fatal
		// (pgx has closed it then); any other error — no answer within ctx
		// above all — may have left it anywhere in the protocol. One left
		// inside a transaction (a batch that failed after its BEGIN) is
		// closed too, as the pool does with one given back so, but is not
		// tried again: the database answered.
		var pgErr *pgconn.PgError
		broken := err != nil && (c.IsClosed() || !errors.As(err, &pgErr))
		inTx := !c.IsClosed() && c.PgConn().TxStatus() != 'I'
		lc.mu.Lock()
		lc.conn = c
		closed = lc.closed // Close was called meanwhile: it left the connection to this call
		closeNow := broken || inTx || closeAfter || closed
		if !closeNow {
			lc.lastUsed = time.Now()
			if lc.idleAfter <= 0 {
				lc.idleAfter = leaseConnIdleMin
			}
			if lc.idle == nil {
				lc.idle = time.AfterFunc(lc.idleAfter, lc.closeIdle)
			} else {
				lc.idle.Reset(lc.idleAfter)
			}
		}
		lc.mu.Unlock()
		if closeNow {
			lc.drop(ctx)
		}
		if broken && kept && !retried && !closed && ctx.Err() == nil {
			// The kept connection died while unused (the database
			// restarted or failed over, a proxy's idle timeout, an
			// administrator ended the session): once more on a new one,
			// as the pool does after its liveness ping. Both calls are
			// safe to repeat.
			continue
		}
		return err
	}
}

// dial opens a connection as the pool opens its own: from its configuration,
// readied by its AfterConnect (ConfigurePool's codecs).
func (lc *leaseConn) dial(ctx context.Context) (*pgx.Conn, error) {
	cfg := lc.pool.Config()
	c, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, err
	}
	if cfg.AfterConnect != nil {
		if err := cfg.AfterConnect(ctx, c); err != nil {
			closeLeaseConn(ctx, c)
			return nil, err
		}
	}
	return c, nil
}

// closeIdle, run by the idle timer, closes the lease connection once it has
// been unused for idleAfter (an elector that stopped without resigning, a
// lease keeper with no job left to renew), or once the Store is closed;
// otherwise it looks again when idleAfter will have passed. A call using the
// connection re-arms the timer as it ends (or closes the connection): the
// timer leaves it alone.
func (lc *leaseConn) closeIdle() {
	select {
	case lc.slot <- struct{}{}:
	default:
		return
	}
	defer lc.release()
	lc.mu.Lock()
	if lc.conn == nil {
		lc.mu.Unlock()
		return
	}
	if wait := lc.idleAfter - time.Since(lc.lastUsed); wait > 0 && !lc.closed && lc.idle != nil {
		lc.idle.Reset(wait)
		lc.mu.Unlock()
		return
	}
	lc.mu.Unlock()
	lc.drop(context.Background())
}

// release gives the slot back. A connection left open on a closed Store —
// Close found the slot taken, and its holder decided before Close was
// called — is closed then: every holder releases after Close has marked the
// Store closed, so the last one to release closes it.
func (lc *leaseConn) release() {
	<-lc.slot
	lc.mu.Lock()
	orphan := lc.closed && lc.conn != nil
	lc.mu.Unlock()
	if !orphan {
		return
	}
	select {
	case lc.slot <- struct{}{}:
		lc.drop(context.Background())
		<-lc.slot
	default: // taken again: its holder releases it in turn
	}
}

// drop closes the lease connection, if open, and stops the idle timer. The
// caller holds the slot.
func (lc *leaseConn) drop(ctx context.Context) {
	lc.mu.Lock()
	c := lc.conn
	lc.conn = nil
	if lc.idle != nil {
		lc.idle.Stop()
		lc.idle = nil
	}
	lc.mu.Unlock()
	if c != nil {
		closeLeaseConn(ctx, c)
	}
}

// withPoolConn runs fn on a connection of the pool, for a database that
// refused the lease's own connection (refused) for being at its connection
// limit. A wait for a free one that outlasts ctx is ErrNoFreeConnection.
func (lc *leaseConn) withPoolConn(ctx context.Context, refused error, fn func(c *pgx.Conn) error) error {
	pc, err := lc.pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %s waited for one until the call's deadline (%v); raise the database's max_connections (or the role's CONNECTION LIMIT), or lower pool_max_conns: %w",
				ErrNoFreeConnection, lc.what, refused, err)
		}
		return fmt.Errorf("take a pooled connection for %s (the database refused one of its own: %v): %w", lc.what, refused, err)
	}
	defer pc.Release()
	return fn(pc.Conn())
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
