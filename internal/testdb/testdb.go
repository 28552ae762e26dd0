// Package testdb gives each test its own PostgreSQL schema, migrated, on a real
// server: DATABASE_URL when set (as `make test` does), otherwise a private cluster
// started for the test binary by Main. It owns nothing in production.
package testdb

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/localpg"
	"github.com/routerhq/router/internal/store"
)

var baseURL string

// Main runs a package's tests with a database: call it from TestMain.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit, for a TestMain that has more to clean up.
func Run(m *testing.M) int {
	baseURL = os.Getenv("DATABASE_URL")
	if baseURL == "" {
		dir, err := os.MkdirTemp("", "router-testdb-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "testdb:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		_ = os.Chmod(dir, 0o755)
		c, err := localpg.Start(context.Background(), localpg.Options{DataDir: dir + "/data"})
		if err != nil {
			fmt.Fprintln(os.Stderr, "testdb: no DATABASE_URL and no local PostgreSQL:", err)
			return 1
		}
		defer c.Stop()
		baseURL = c.URL
	}
	return m.Run()
}

// DB is one test's database: a schema of its own on the shared server.
type DB struct {
	Pool   *pgxpool.Pool
	Store  *store.Store
	URL    string // connection URL whose search_path is the test's schema
	Schema string
}

// New creates a fresh migrated schema for t and drops it when t ends.
func New(t testing.TB, opt store.Options) *DB {
	t.Helper()
	if baseURL == "" {
		t.Fatal("testdb: call testdb.Main(m) from TestMain")
	}
	ctx := context.Background()
	schema := "t_" + strings.ToLower(rand.Text()[:12])
	admin, err := pgxpool.New(ctx, baseURL)
	if err != nil {
		t.Fatalf("testdb: connect: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("testdb: create schema: %v", err)
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		t.Fatalf("testdb: parse DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		t.Fatalf("testdb: parse DATABASE_URL: %v", err)
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("testdb: connect to schema: %v", err)
	}
	st := store.New(pool, opt)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("testdb: migrate: %v", err)
	}
	t.Cleanup(func() {
		st.Close() // the leader lease's connection, if a test took the lease on it
		pool.Close()
		admin, err := pgxpool.New(context.Background(), baseURL)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	return &DB{Pool: pool, Store: st, URL: u.String(), Schema: schema}
}
