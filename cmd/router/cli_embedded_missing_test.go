package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With `database_url: embedded`, a one-shot command run from a directory
// where the embedded database was never created (not where `make run` runs)
// is refused (exit 1) and creates nothing: it used to initdb a new cluster in
// .local/pg there, create the key on it, print it and exit 0 — a key the
// running router never accepts.
func TestOneShotCommandDoesNotCreateAnEmbeddedDatabase(t *testing.T) {
	unsetenv(t, "DATABASE_URL")
	parent := reachableDir(t) // were a cluster created, the server's user could reach it here
	t.Chdir(parent)
	cfg := filepath.Join(parent, "router.yaml")
	if err := os.WriteFile(cfg, []byte("database_url: embedded\nlog: {level: error}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() {
		code = run(context.Background(), []string{"keys", "create", "--owner", "acme", "--config", cfg})
	})
	if _, err := os.Stat(filepath.Join(parent, ".local")); !os.IsNotExist(err) {
		t.Errorf(".local was created (%v): the command started an embedded database of its own", err)
	}
	if code != 1 || stdout != "" || !strings.Contains(stderr, filepath.Join(parent, ".local", "pg")) || !strings.Contains(stderr, "make run") {
		t.Errorf("exit code %d, stdout %q, stderr %q; want 1, no key, and a refusal naming the directory and `make run`", code, stdout, stderr)
	}
}
