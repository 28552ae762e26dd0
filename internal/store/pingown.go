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
)

// ownPings holds a Store's probe connection of Ping's being dialled or
// pinged, if any. Readiness is answered to anyone: a burst of probes while
// the pool is busy opened one connection each before, as many as were sent,
// and could take the database's last connections from every replica. cur
// lives as long as its connection, no longer. A replica makes one Store for
// its pool (New), so this is one probe connection at a time per pool.
type ownPings struct {
	mu  sync.Mutex
	cur *ownPing
}

// ownPing is one probe connection's dial and ping; done closes when the
// connection is closed, err then holding the answer.
type ownPing struct {
	done chan struct{}
	err  error
}

// ownPingBound bounds a probe connection whose first caller's ctx has no
// deadline (readiness gives its probes 2 s).
const ownPingBound = 5 * time.Second

// pingOwnConn asks the database on a connection of its own, one at a time
// per Store: a caller that finds a probe connection under way takes its
// answer rather than opening another. The connection runs within the first
// caller's deadline (not its cancellation: the others are waiting for it);
// each caller waits for the answer within its own ctx.
func (s *Store) pingOwnConn(ctx context.Context) error {
	s.probe.mu.Lock()
	p := s.probe.cur
	if p == nil {
		p = &ownPing{done: make(chan struct{})}
		s.probe.cur = p
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(ownPingBound)
		}
		pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		go func() {
			defer cancel()
			err := s.pingNewConn(pctx)
			s.probe.mu.Lock()
			s.probe.cur = nil
			s.probe.mu.Unlock()
			p.err = err
			close(p.done)
		}()
	}
	s.probe.mu.Unlock()
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("ping the database: %w", context.Cause(ctx))
	}
}

// pingNewConn dials a connection from the pool's configuration, pings it and
// closes it. A database that refuses the connection because it is at its
// connection limit (too_many_connections, for the server, the role or the
// database) answered: while the pool holds connections at work, the router
// works, and that is logged, not an error. Any other refusal (the database
// starting or shutting down, authentication) or no answer is an error.
func (s *Store) pingNewConn(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.TooManyConnections {
			if busy := s.pool.Stat().AcquiredConns(); busy > 0 {
				s.opt.Log.Warn("readiness: the database is at its connection limit and refused the probe's connection; it answers, and the pool's connections are at work",
					"pool_busy_conns", busy, "err", err)
				return nil
			}
		}
		return fmt.Errorf("connect to the database (the pool has no idle connection): %w", err)
	}
	defer conn.Close(ctx)
	if err := checkWritable(ctx, conn); err != nil {
		if errors.Is(err, ErrReadOnly) {
			return err
		}
		return fmt.Errorf("ping the database: %w", err)
	}
	return nil
}
