package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An empty or truncated router.yaml (a config map that did not mount, a
// half-written deploy) loads, as every key has a default. `serve` used to
// start on it: bind its listeners, start or join the database, answer
// /readyz 200 and take a share of tenant traffic it could only refuse.
// `serve` and `conformance run` refuse it before anything listens or the
// database is touched: the database named here does not answer, so a command
// that got that far would fail saying so instead. Found by review.
func TestServeAndConformanceRefuseAConfigurationWithNoRoutes(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	suites, err := filepath.Abs("../../conformance/suites")
	if err != nil {
		t.Fatal(err)
	}
	keepGC(t) // runServe tunes the process's garbage collector
	for name, yaml := range map[string]string{
		"empty":                "",
		"only comments":        "# router.yaml\n",
		"listeners only":       "listen: 127.0.0.1:0\nops_listen: 127.0.0.1:0\n",
		"providers, no routes": "listen: 127.0.0.1:0\nops_listen: 127.0.0.1:0\nproviders:\n  - {name: p, type: scripted}\n",
	} {
		path := filepath.Join(t.TempDir(), "router.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"serve", "--config", path},
			{"conformance", "run", "--config", path, "--suites", suites},
		} {
			var code int
			_, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
			if code != 1 || !strings.Contains(stderr, path+" defines no routes") || !strings.Contains(stderr, "add a routes: section") ||
				!strings.Contains(stderr, "docs/configuration.md") {
				t.Errorf("%s: router %s: exit code %d, stderr %q; want exit code 1 saying %s defines no routes and how to add them",
					name, strings.Join(args[:len(args)-2], " "), code, stderr, path)
			}
		}
	}
}

// The refusal names the configured providers in its example.
func TestNoRoutesRefusalSuggestsAConfiguredProvider(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte("providers:\n  - {name: fast, type: scripted}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keepGC(t)
	err := runServe(context.Background(), []string{"--config", path})
	if err == nil || !strings.Contains(err.Error(), "routes: {default: {providers: [fast]}}") {
		t.Fatalf("serve with providers and no routes: %v; want a refusal whose example names provider fast", err)
	}
}

// A configuration that names only the database still serves the commands
// that need nothing else: they keep working where serve refuses.
func TestDatabaseOnlyConfigurationServesTheOneShotCommands(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte("log: {level: error}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"migrate", "--config", path},
		{"keys", "list", "--config", path},
		{"jobs", "list", "--config", path},
	} {
		var code int
		_, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
		if code != 0 {
			t.Errorf("router %s with a configuration naming only the database: exit code %d, stderr %q; want 0",
				strings.Join(args, " "), code, stderr)
		}
	}
}
