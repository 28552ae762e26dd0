package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/operations.md (Upgrading) tells operators to check a configuration
// with the new binary before a rolling upgrade, but no command only checked
// one: serve serves and migrates, migrate migrates, and keys/jobs need the
// database and skip serve's start-up checks. `router config check` runs
// serve's checks up to the database and stops there: the database named
// here does not answer, so a check that touched it would fail. Found by
// review (rcli10).
func TestConfigCheck(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	t.Setenv("ROUTER_DEMO_KEY", "demo-key")
	demo, err := filepath.Abs("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"config", "check", "--config", demo}) })
	want := demo + ": valid for this binary (router "
	if code != 0 || !strings.HasPrefix(stdout, want) || strings.Count(stdout, "\n") != 1 ||
		!strings.Contains(stdout, "2 provider(s), 2 target(s), 1 route(s), ") || !strings.Contains(stdout, "database: DATABASE_URL") {
		t.Fatalf("config check of the demo: exit %d, stdout %q, stderr %q; want exit 0 and one line starting %q", code, stdout, stderr, want)
	}
	if strings.Contains(stdout, " 0 prompt(s)") {
		t.Errorf("config check of the demo: %q counts no prompt; the demo's prompts directory has some", stdout)
	}

	// What serve refuses before the database, config check refuses, exit 2,
	// with the problem: a problem in the file, a key missing from the
	// environment, a prompt whose route is not configured.
	demoYAML, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := filepath.Abs("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	withPrompts := strings.Replace(string(demoYAML), "prompts_dir: ../prompts", "prompts_dir: "+prompts, 1)
	for name, c := range map[string]struct{ yaml, env, want string }{
		"blank database_url": {strings.Replace(withPrompts, "database_url: embedded", `database_url: ""`, 1), "", "database_url is written but blank"},
		"key not set":        {withPrompts, "ROUTER_DEMO_KEY", "api_keys[0].key_env: environment variable ROUTER_DEMO_KEY (owner demo) is empty"},
		"prompt's route":     {strings.Replace(withPrompts, "routes:\n  default:", "routes:\n  other:", 1), "", "prompts and routes do not match"},
		"no routes":          {"providers:\n  - {name: p, type: scripted}\n", "", "defines no routes"},
	} {
		t.Run(name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(c.env, "")
			}
			if name == "blank database_url" {
				t.Setenv("DATABASE_URL", "")
			}
			path := filepath.Join(t.TempDir(), "router.yaml")
			if err := os.WriteFile(path, []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			var code int
			stdout, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"config", "check", "--config", path}) })
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "router config check: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and stderr saying %q", code, stdout, stderr, c.want)
			}
		})
	}
}
