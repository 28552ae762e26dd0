package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `router config check` promises exit 0 only "when serve would start" (its
// --help), and exists so that a configuration is checked with a new binary
// before a rolling upgrade. A listen address whose port is written as a
// service name that does not exist (808O, a letter O for a zero; 8080x)
// passed config.Load (a service-name-shaped port "is left to the listener"),
// was reported valid, and then made serve refuse to start at listenFor. The
// load now looks the port up as the listener does (net.LookupPort reads
// /etc/services, no network), so serve and config check refuse it alike,
// naming the setting. Found by review (rjobs12 F1).
func TestConfigCheckRefusesListenServeRefuses(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	t.Setenv("ROUTER_DEMO_KEY", "demo-key")
	demo, err := filepath.Abs("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := filepath.Abs("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	demoYAML, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(demoYAML), "prompts_dir: ../prompts", "prompts_dir: "+prompts, 1)
	for _, addr := range []string{"127.0.0.1:808O", "127.0.0.1:8080x"} {
		// serve refuses it before anything else (cmd/router/serve.go: listenFor).
		ln, lerr := listenFor(addr, "listen")
		if lerr == nil {
			ln.Close()
			t.Fatalf("listenFor(%q) succeeded; the test's premise (serve refuses it) does not hold", addr)
		}
		yaml := strings.Replace(base, "listen: 127.0.0.1:8080", "listen: "+addr, 1)
		path := filepath.Join(t.TempDir(), "router.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"config", "check", "--config", path}) })
		if code != 2 {
			t.Errorf("config check with listen %s: exit %d, stdout %q, stderr %q; serve refuses it (%v): want exit 2 naming listen",
				addr, code, strings.TrimSpace(stdout), strings.TrimSpace(stderr), lerr)
		} else if _, port, _ := strings.Cut(addr, ":"); !strings.Contains(stderr, "listen: "+addr+": port "+`"`+port+`"`) {
			t.Errorf("config check with listen %s: stderr %q does not name the setting and its port", addr, strings.TrimSpace(stderr))
		}
	}
}

// The summary line of `router config check` says which database serve would
// use. DATABASE_URL=embedded puts serve on the embedded development database
// (config.Load takes DATABASE_URL over database_url; embeddedDatabase then
// reads "embedded"), but the summary says "database: DATABASE_URL" — read by
// an operator checking a production replica's environment as "the URL in
// DATABASE_URL", the shared PostgreSQL. Found by review (rjobs12 F2).
func TestConfigCheckNamesEmbeddedFromEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "embedded")
	t.Setenv("ROUTER_DEMO_KEY", "demo-key")
	demo, err := filepath.Abs("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := filepath.Abs("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	demoYAML, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(demoYAML), "prompts_dir: ../prompts", "prompts_dir: "+prompts, 1)
	yaml = strings.Replace(yaml, "database_url: embedded", "database_url: postgres://router@db.internal:5432/router", 1)
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"config", "check", "--config", path}) })
	if code != 0 || !strings.Contains(stdout, "embedded") {
		t.Errorf("config check with DATABASE_URL=embedded: exit %d, stdout %q, stderr %q; want the summary to say serve would use the embedded development database",
			code, strings.TrimSpace(stdout), strings.TrimSpace(stderr))
	}
}
