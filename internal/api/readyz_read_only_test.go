package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A database that answers but accepts no writes — a demoted primary after a
// failover that the pool still reaches, a replica named by mistake, or
// default_transaction_read_only set for the role — fails every job at its
// first write, yet /readyz said 200 "ready": the load balancer kept sending
// it every request. It is 503 "Database read-only", on the probe's idle
// connection and on its own connection (the pool busy) alike.
func TestReadyzReadOnlyDatabaseIsNotReady(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	cfg.MinConns, cfg.MaxConns = 1, 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	readyz := readyzOf(t, pool)
	check := func(what string) {
		t.Helper()
		code, body := readyz()
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "Database read-only") || !strings.Contains(body, "accepts no writes") {
			t.Fatalf("%s: /readyz %d %s; want 503 Database read-only", what, code, body)
		}
	}
	check("idle pool")
	conn, err := pool.Acquire(ctx) // the work holds the pool's one connection: the probe dials its own
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	check("busy pool")
}
