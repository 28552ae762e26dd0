package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// readyzOf serves /readyz for a store on pool and returns a function that
// asks it.
func readyzOf(t *testing.T, pool *pgxpool.Pool) func() (int, string) {
	t.Helper()
	srv := httptest.NewServer(api.New(api.Config{}, api.Deps{Store: store.New(pool, store.Options{})}))
	t.Cleanup(srv.Close)
	return func() (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
}

// A pool whose every connection is held by work (a burst, a slow batch) is
// busy, not a database that does not answer: /readyz stays 200 while the
// work holds the connections. Before, the probe queued for a connection
// behind the work, gave up after its 2 s and answered 503 "Database
// unreachable" — on every replica of a burst at once.
func TestReadyzBusyPoolIsNotDatabaseUnreachable(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinConns, cfg.MaxConns = 1, 1
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	readyz := readyzOf(t, pool)
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("idle pool: /readyz %d %s", code, body)
	}
	conn, err := pool.Acquire(context.Background()) // the work holds the pool's one connection
	if err != nil {
		t.Fatal(err)
	}
	code, body := readyz() // answered while the connection is held
	conn.Release()
	if code != http.StatusOK {
		t.Fatalf("busy pool (database up): /readyz %d %s, want 200", code, body)
	}
}

// An idle connection of the pool that died silently (a NAT or firewall that
// dropped the flow) does not make a database that answers unreachable: the
// probe gives it up within the pool's ping timeout and asks on a new
// connection.
func TestReadyzSilentIdleConnectionIsNotDatabaseUnreachable(t *testing.T) {
	db := testdb.New(t, store.Options{})
	proxy := testdb.StartProxy(t, db.URL)
	pool := proxy.Pool(t, db.URL, func(cfg *pgxpool.Config) { cfg.MinConns, cfg.MaxConns = 0, 2 })
	readyz := readyzOf(t, pool)
	if code, body := readyz(); code != http.StatusOK { // also reads the migrations once
		t.Fatalf("/readyz %d %s", code, body)
	}
	conn, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn.Release() // the pool keeps it idle
	if idle := pool.Stat().IdleConns(); idle == 0 {
		t.Fatal("the pool kept no idle connection")
	}
	proxy.Freeze() // every connection open now dies silently; new ones answer
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("silent idle connection (database up): /readyz %d %s, want 200", code, body)
	}
}

// A database that accepts connections and never answers is still
// "Database unreachable" (503), with the pool's connections busy or not.
func TestReadyzDatabaseThatNeverAnswersIsUnreachable(t *testing.T) {
	silent := testdb.SilentDatabase(t)
	cfg, err := pgxpool.ParseConfig(silent.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	code, body := readyzOf(t, pool)()
	var p struct{ Title string }
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("/readyz %d %q: %v", code, body, err)
	}
	if code != http.StatusServiceUnavailable || p.Title != "Database unreachable" {
		t.Fatalf("silent database: /readyz %d %s, want 503 Database unreachable", code, body)
	}
}
