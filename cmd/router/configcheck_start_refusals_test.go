package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `router config check` says it exits 0 only "when serve would start" and
// refuses "what the new binary's serve would refuse at start" (docs). serve
// refuses a database_url (or DATABASE_URL) that does not parse — a typo'd
// port, a pool_max_conns that is no number — at once, before it dials
// anything (store.Connect: "parse database URL: ..."). Parsing the URL
// touches no database, so config check refuses it too (it said "valid for
// this binary" before; rdiff58).
func TestConfigCheckRefusesUnparsableDatabaseURL(t *testing.T) {
	t.Setenv("ROUTER_DEMO_KEY", "demo-key")
	demo, err := filepath.Abs("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	demoYAML, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := filepath.Abs("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	withPrompts := strings.Replace(string(demoYAML), "prompts_dir: ../prompts", "prompts_dir: "+prompts, 1)
	for bad, says := range map[string]string{
		`postgres://router@db.internal:54x2/router?pool_max_conns=abc`: "database URL",
		// a minimum above the maximum: pgxpool parses it, store.PoolConfig refuses it
		`postgres://router@db.internal:5432/router?pool_min_conns=5&pool_max_conns=3`: "pool_min_conns=5 is more than pool_max_conns=3",
	} {
		for name, c := range map[string]struct{ yaml, env string }{
			"database_url in the file": {strings.Replace(withPrompts, "database_url: embedded", `database_url: "`+bad+`"`, 1), ""},
			"DATABASE_URL":             {withPrompts, bad},
		} {
			t.Run(says+"/"+name, func(t *testing.T) {
				t.Setenv("DATABASE_URL", c.env)
				path := filepath.Join(t.TempDir(), "router.yaml")
				if err := os.WriteFile(path, []byte(c.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
				var code int
				stdout, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"config", "check", "--config", path}) })
				if code != 2 || !strings.Contains(stderr, says) {
					t.Errorf("config check with a database URL serve refuses at start: exit %d, stdout %q, stderr %q; "+
						"want exit 2 saying %q", code, stdout, stderr, says)
				}
			})
		}
	}
}

// serve refuses, before the database (server.New: telemetry.SetupLogged), an
// OTLP exporter the environment asks for in a protocol it does not support;
// config check, "run where serve would run, with the same environment",
// refuses it too (it said exit 0 "valid" before, and the rolling upgrade's
// replicas then failed to start; rdiff58).
func TestConfigCheckRefusesWhatServeRefusesInTheTelemetryEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	t.Setenv("ROUTER_DEMO_KEY", "demo-key")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	demo, err := filepath.Abs("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"config", "check", "--config", demo}) })
	if code != 2 || !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Errorf("config check with OTEL_EXPORTER_OTLP_PROTOCOL=http/json (serve refuses it at start): exit %d, stdout %q, stderr %q; "+
			"want exit 2 naming the variable", code, stdout, stderr)
	}
}
