package main

import (
	"context"
	"crypto/rand"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A command line that cannot be right — a required flag missing, an ID that
// is not one — is a usage error: exit 2 (not 1, a failure while acting), a
// message saying what is wrong, and nothing done.
func TestBadArgumentsAreUsageErrors(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "create", "--config", cfg}, "--owner is required"},
		{[]string{"keys", "create", "--owner", "", "--config", cfg}, "--owner is required"},
		{[]string{"keys", "revoke", "abc", "--config", cfg}, "not a key ID"},
		{[]string{"keys", "revoke", "0", "--config", cfg}, "not a key ID"},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, c.args) })
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("router %s: exit code %d, stdout %q, stderr %q; want exit code 2 saying %q",
				strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
	if keys, err := db.Store.ListAPIKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("keys %+v (%v), want none", keys, err)
	}
}

// freshDatabase is a configuration whose database is an empty schema, as a
// new database is before `router migrate`, and that schema's name.
func freshDatabase(t *testing.T) (db *testdb.DB, schema, cfg string) {
	t.Helper()
	db = testdb.New(t, store.Options{})
	ctx := context.Background()
	fresh := "t_fresh_" + strings.ToLower(rand.Text()[:10])
	if _, err := db.Pool.Exec(ctx, "CREATE SCHEMA "+fresh); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Pool.Exec(context.Background(), "DROP SCHEMA "+fresh+" CASCADE") })
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", fresh)
	u.RawQuery = q.Encode()
	return db, fresh, writeConfig(t, &testdb.DB{URL: u.String()}, "  - name: p\n    type: scripted")
}

// On a database that was never migrated, the commands that do not migrate it
// themselves say to run `router migrate`, not only PostgreSQL's `relation
// "api_keys" does not exist`.
func TestCommandsOnAnUnmigratedDatabaseSayToMigrate(t *testing.T) {
	_, _, cfg := freshDatabase(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"keys", "list", "--config", cfg},
		{"keys", "revoke", "1", "--config", cfg},
		{"jobs", "get", "0190c0de-0000-7000-8000-000000000000", "--config", cfg},
	} {
		var code int
		_, stderr := captureOutput(t, func() { code = run(ctx, args) })
		if code != 1 || !strings.Contains(stderr, "does not exist") || strings.Count(stderr, "router migrate --config "+cfg) != 1 {
			t.Errorf("router %s: exit code %d, stderr %q; want exit code 1 saying (once) to run `router migrate --config %s`",
				strings.Join(args, " "), code, stderr, cfg)
		}
	}
}

// `router serve` with auto_migrate off, on a database never migrated, says
// to migrate too.
func TestServeOnAnUnmigratedDatabaseSaysToMigrate(t *testing.T) {
	_, _, cfg := freshDatabase(t)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("listen: 127.0.0.1:0\nops_listen: 127.0.0.1:0\nauto_migrate: false\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	keepGC(t) // runServe tunes the process's garbage collector
	var code int
	_, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"serve", "--config", cfg}) })
	if code != 1 || !strings.Contains(stderr, "does not exist") || !strings.Contains(stderr, "router migrate --config "+cfg) {
		t.Fatalf("serve on an unmigrated database: exit code %d, stderr %q; want exit code 1 saying to run `router migrate`", code, stderr)
	}
}

// SIGTERM or Ctrl-C while `router serve` is still starting stops it cleanly
// (exit 0, nothing to drain), not with the error the interrupted start-up
// returns ("database unreachable: context canceled").
func TestServeStoppedWhileStartingIsNotAFailure(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg, err := config.Load(writeConfig(t, db, "  - name: p\n    type: scripted"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came before the router was ready
	if err := serve(ctx, cfg, listen(t), listen(t), nil); err != nil {
		t.Fatalf("serve stopped while starting: %v; want nil (exit 0)", err)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
