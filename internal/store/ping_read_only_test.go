package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A pool connection that answers the readiness probe "read-only" reaches a
// server that accepts no writes — a primary demoted by a failover while the
// pool kept its connections. Given back to the pool, the next job took it
// and failed at its first write; closed, the pool dials again, and a
// DATABASE_URL naming several hosts with target_session_attrs=read-write
// reaches the new primary.
func TestPingClosesReadOnlyIdleConnection(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	cfg.MinConns, cfg.MaxConns = 0, 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := c.Conn().PgConn().PID()
	c.Release()
	st := store.New(pool, store.Options{})
	if err := st.Ping(ctx); !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("Ping: %v; want ErrReadOnly", err)
	}
	c, err = pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if pid := c.Conn().PgConn().PID(); pid == first {
		t.Fatalf("the pool handed out the connection (backend %d) the probe found read-only; want it closed and a new one dialled", pid)
	}
}
