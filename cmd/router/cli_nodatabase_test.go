package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A one-shot command run where the deployment's DATABASE_URL is missing (an
// ssh shell, a job without the pod's environment) is refused, naming what to
// set: it used to start a new development database of its own in .local/pg
// and report success there — a key no replica accepts, "no job matches"
// while the router's database has them. `serve` keeps SPEC §11's default.
func TestOneShotCommandsRefuseAConfigurationWithoutADatabase(t *testing.T) {
	unsetenv(t, "DATABASE_URL")
	suites, err := filepath.Abs("../../conformance/suites")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir) // were the embedded database started, .local/pg would appear here
	cfg := filepath.Join(dir, "router.yaml")
	if err := os.WriteFile(cfg, []byte("log: {level: error}\nproviders:\n  - {name: p, type: scripted}\nroutes:\n  default: {providers: [p]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"migrate", "--config", cfg},
		{"keys", "create", "--config", cfg, "--owner", "acme"},
		{"keys", "list", "--config", cfg},
		{"jobs", "list", "--config", cfg},
		{"conformance", "run", "--config", cfg, "--suites", suites},
	} {
		var code int
		_, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
		if code == 0 || !strings.Contains(stderr, "no database_url or DATABASE_URL: this command would run on a new development database") {
			t.Errorf("router %s: exit code %d, stderr %q; want a refusal naming DATABASE_URL", strings.Join(args, " "), code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".local")); !os.IsNotExist(err) {
		t.Errorf(".local was created (%v): a command started the embedded database", err)
	}
}
