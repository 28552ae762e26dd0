package api_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
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
	var owner string
	if err := db.Pool.QueryRow(ctx, "SELECT current_user").Scan(&owner); err != nil {
		t.Fatal(err)
	}
	// A role is the cluster's, not the test's schema's: named uniquely, dropped after.
	role := "readyz_limit_" + strings.ToLower(rand.Text()[:10])
	if _, err := db.Pool.Exec(ctx, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 1 IN ROLE "+pgx.Identifier{owner}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.User = role
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
