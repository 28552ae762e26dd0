package localpg_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// As root, a project in a directory the server's user cannot enter (under
// /root, mode 0700 on Debian): the embedded database of `make run` must keep
// its data between runs, and a second Start — a CLI command while `make run`
// serves — must reach the same server, not a throwaway one. Found by review.
func TestUnreachableProjectKeepsItsDatabase(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root runs the server as another user")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	outside, err := os.MkdirTemp("", "router-localpg-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.Chmod(outside, 0o755); err != nil { // as /var/lib is
		t.Fatal(err)
	}
	defer localpg.SetOutsideRoot(filepath.Join(outside, "kept"))()
	home := t.TempDir() // like /root: mode 0700
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "project", ".local", "pg")

	first, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	second, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Durable: true})
	if err != nil {
		first.Stop()
		t.Fatal(err)
	}
	if second.URL != first.URL {
		t.Errorf("a second Start on %s while the first runs started another server (%s, not %s)", dir, second.URL, first.URL)
	}
	second.Stop() // attached: the server keeps running
	conn, err := pgx.Connect(ctx, first.URL)
	if err != nil {
		first.Stop()
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "CREATE TABLE kept (x int)")
	conn.Close(ctx)
	first.Stop()
	if err != nil {
		t.Fatal(err)
	}
	again, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	conn, err = pgx.Connect(ctx, again.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'kept'").Scan(&n); err != nil || n != 1 {
		t.Errorf("the data of %s did not survive a restart (%d tables, %v): first in %s, then %s", dir, n, err, first.DataDir, again.DataDir)
	}
}

// Where the kept directory cannot be made (a read-only root file system), a
// temporary one still starts the database, as before, removed at stop.
func TestUnreachableProjectWithoutAKeptDirectoryStillStarts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root runs the server as another user")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defer localpg.SetOutsideRoot("/dev/null/kept")() // cannot be created
	home := t.TempDir()
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := localpg.Start(ctx, localpg.Options{DataDir: filepath.Join(home, "project", ".local", "pg"), Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	data := c.DataDir
	c.Stop()
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the temporary data directory %s was left behind (%v)", data, err)
	}
}
