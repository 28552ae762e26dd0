package store

import (
	"context"
	"errors"
	"fmt"
)

// Ping checks the database answers, without waiting for the work's pool: a
// readiness probe must tell a database that does not answer from one that
// is only busy. pgxpool's own Ping checks a connection out of the pool the
// jobs use, and queues behind them when every connection is taken — a burst
// or a slow batch that holds the pool for longer than the probe's budget
// made every replica "Database unreachable" at once, though the database
// answered throughout.
//
// Ping takes an idle connection of the pool when there is one, without
// waiting (pgxpool's AcquireAllIdle, meant for health checks; any other
// idle connection goes straight back), and sends it an empty query within
// the pool's PingTimeout (asking whether the database accepts writes:
// ErrReadOnly when it does not): a connection that died silently (a NAT or
// firewall that dropped the flow) is closed, and the pool destroys it, as
// pgxpool's own liveness ping would. When no idle connection answers, Ping
// asks on a connection of its own, dialled from the pool's configuration,
// pinged and closed: the pool's limit is not the database's, and a database
// that does not answer fails that dial (within ctx). One such connection at
// most is open per Store (a replica makes one Store for its pool):
// concurrent probes share it and its answer (pingOwnConn). A database that
// refuses it for being at its connection limit answered, and, while the
// pool's own connections are at work, is ready. Errors name the step; the
// caller logs them.
func (s *Store) Ping(ctx context.Context) error {
	if answered, err := s.pingIdle(ctx); answered {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ping the database: %w", context.Cause(ctx))
	}
	return s.pingOwnConn(ctx)
}

// pingIdle pings an idle connection of the pool, if it has one, within the
// pool's PingTimeout, and reports whether it answered; err is ErrReadOnly
// when the answer is that the database accepts no writes. One that did not
// answer, or answered read-only, is closed (the pool destroys it on
// release).
func (s *Store) pingIdle(ctx context.Context) (answered bool, err error) {
	idle := s.pool.AcquireAllIdle(ctx)
	if len(idle) == 0 {
		return false, nil
	}
	for _, c := range idle[1:] {
		c.Release()
	}
	c := idle[0]
	defer c.Release()
	timeout := s.pool.Config().PingTimeout
	if timeout <= 0 {
		timeout = DefaultPingTimeout
	}
	pctx, cancel := context.WithTimeoutCause(ctx, timeout, errIdleSilent)
	defer cancel()
	if err := checkWritable(pctx, c); err != nil {
		// A read-only server (a primary demoted by a failover) is closed
		// too: given back, it would fail the next job's first write, while
		// a new dial may reach the new primary (target_session_attrs).
		if !c.Conn().IsClosed() {
			c.Conn().Close(context.WithoutCancel(ctx))
		}
		if errors.Is(err, ErrReadOnly) {
			return true, err
		}
		return false, nil
	}
	return true, nil
}

// errIdleSilent: an idle connection did not answer its ping in time.
var errIdleSilent = errors.New("an idle connection of the pool did not answer its ping")
