package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// captureOutput runs f with os.Stdout and os.Stderr redirected, and returns what
// it wrote to each. (No test of this package runs in parallel.)
func captureOutput(t *testing.T, f func()) (stdout, stderr string) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var outBuf, errBuf bytes.Buffer
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(&outBuf, outR) })
	wg.Go(func() { _, _ = io.Copy(&errBuf, errR) })
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outW, errW
	defer func() {
		os.Stdout, os.Stderr = oldOut, oldErr
		outW.Close()
		errW.Close()
		wg.Wait()
		outR.Close()
		errR.Close()
		stdout, stderr = outBuf.String(), errBuf.String()
	}()
	f()
	return
}

// helpRun runs `router args...` in-process, as main does, and checks that it
// printed the help (naming want) on stdout, as asked-for output, exited 0 and
// wrote nothing to stderr. Stdout starting with the help says nothing was
// printed before it; the callers check that nothing was done (no key created).
func helpRun(t *testing.T, want string, args ...string) {
	t.Helper()
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage:") || !strings.Contains(stdout, want) {
		t.Errorf("router %s: exit code %d, stderr %q, stdout:\n%s\nwant exit code 0, nothing on stderr and help naming %q on stdout",
			strings.Join(args, " "), code, stderr, stdout, want)
	}
}

// --help (or -h) anywhere on a command line prints the help and exits 0
// without doing anything: no key created or revoked, no conformance run, no
// job read, no server started.
func TestHelpDoesNotAct(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, `  - name: scripted-help
    type: scripted
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'`)
	ctx := context.Background()
	if _, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"}); err != nil {
		t.Fatal(err)
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %+v (%v)", keys, err)
	}
	id := fmt.Sprint(keys[0].ID)
	marker := filepath.Join(t.TempDir(), "ran")

	helpRun(t, "router keys create", "keys", "create", "--owner", "acme", "--help", "--config", cfg)
	helpRun(t, "router keys create", "keys", "create", "--owner", "acme", "--webhook-url", "https://hooks.example.com/h", "--config", cfg, "-h")
	helpRun(t, "router keys revoke", "keys", "revoke", id, "--help", "--config", cfg)
	helpRun(t, "router keys revoke", "keys", "revoke", id, "--config", cfg, "--help")
	helpRun(t, "router keys revoke", "keys", "revoke", "--config", cfg, "--help", id)
	helpRun(t, "router keys revoke", "keys", "revoke", "--help")
	helpRun(t, "router keys list", "keys", "list", "--config", cfg, "--help")
	helpRun(t, "router keys create", "keys", "--help")
	helpRun(t, "router jobs get", "jobs", "get", "job_123", "--config", cfg, "--help")
	helpRun(t, "router jobs get", "jobs", "--help")
	helpRun(t, "router jobs get", "jobs", "get", "-h")
	helpRun(t, "router conformance run", "conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--help")
	helpRun(t, "-concurrency", "conformance", "--help") // run's flags, as `conformance run --help` lists them
	// serve would fail on the missing file if it went on.
	helpRun(t, "router serve", "serve", "--config", filepath.Join(t.TempDir(), "missing.yaml"), "--help")
	// localdb would run the command (DATABASE_URL is set: it starts no server).
	helpRun(t, "router localdb", "localdb", "--help", "--", "touch", marker)

	keys, err = db.Store.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || fmt.Sprint(keys[0].ID) != id || keys[0].RevokedAt != nil || keys[0].WebhookURL != nil {
		t.Fatalf("after --help: keys %+v (%v), want only the one key, not revoked", keys, err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("localdb --help ran its command (%v)", err)
	}
	var runs int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM conformance_runs").Scan(&runs); err != nil || runs != 0 {
		t.Fatalf("after --help: %d conformance runs stored (%v), want none", runs, err)
	}
}

// `router migrate --help` on an empty database prints the help and creates
// nothing; `router migrate` then migrates it (so the check above can see a
// migration).
func TestMigrateHelpDoesNotMigrate(t *testing.T) {
	db, fresh, cfg := freshDatabase(t)
	ctx := context.Background()
	tables := func() int {
		t.Helper()
		var n int
		if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", fresh).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	helpRun(t, "router migrate", "migrate", "--help", "--config", cfg)
	helpRun(t, "router migrate", "migrate", "--config", cfg, "-h")
	if n := tables(); n != 0 {
		t.Fatalf("migrate --help created %d tables, want none", n)
	}

	var code int
	stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{"migrate", "--config", cfg}) })
	if code != 0 || !strings.Contains(stdout, "applied") || tables() == 0 {
		t.Fatalf("migrate: exit code %d, %d tables\nstdout: %s\nstderr: %s", code, tables(), stdout, stderr)
	}
}

// A word left over after the flags is refused (exit 2) with what is wrong and
// what to do, instead of being ignored while the command acts.
func TestLeftoverArgumentsAreRefused(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	for _, args := range [][]string{
		{"keys", "create", "--owner", "acme", "--config", cfg, "help"},
		{"keys", "create", "acme", "--owner", "acme", "--config", cfg},
		{"keys", "list", "--config", cfg, "all"},
		{"keys", "revoke", "1", "2", "--config", cfg},
		{"migrate", "--config", cfg, "now"},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, args) })
		if code != 2 || stdout != "" || !strings.Contains(stderr, "unexpected argument") || !strings.Contains(stderr, "--help") {
			t.Errorf("router %s: exit code %d, stdout %q, stderr %q; want exit code 2 naming the unexpected argument",
				strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if keys, err := db.Store.ListAPIKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("keys %+v (%v), want none", keys, err)
	}
}
