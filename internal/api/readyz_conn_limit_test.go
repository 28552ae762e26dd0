package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A database at its connection limit answers ("too many connections"), and
// the pool's connections keep working: a busy pool there is ready, not 503
// "Database unreachable". Pools are often sized to fill max_connections, so
// before, in a burst, every replica dropped readiness together.
func TestReadyzBusyPoolAtConnectionLimit(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg := db.LimitedRole(t, 1)
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
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("idle pool: /readyz %d %s", code, body)
	}
	conn, err := pool.Acquire(ctx) // the work holds the pool's one connection, the role's last
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("busy pool, database at its connection limit (it answers): /readyz %d %s, want 200", code, body)
	}
}
