package localpg_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// Restart is a crash and a start on the same port: connections are cut, the URL
// stays valid, and what a durable cluster committed survives.
func TestRestartKeepsURLAndCommittedData(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := tempDir(t)
	c, err := localpg.Start(ctx, localpg.Options{DataDir: dir + "/data", Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)`); err != nil {
		t.Fatal(err)
	}
	url := c.URL
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if c.URL != url {
		t.Fatalf("URL changed from %s to %s", url, c.URL)
	}
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("a connection opened before the restart still works: the server was not restarted")
	}
	conn.Close(ctx)
	conn, err = pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatalf("connect after restart: %v", err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT v FROM kept`).Scan(&v); err != nil || v != 42 {
		t.Fatalf("committed row after restart: %d (%v)", v, err)
	}
}

// tempDir is a directory for a cluster's data, removed when t ends; it is
// world-readable so that the server's own user (when the tests run as root)
// can reach the data directory inside it.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "router-localpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
