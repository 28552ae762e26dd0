package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
)

// copyPrompt copies ../../prompts/<name> into dir, with its manifest's
// "route: default" line replaced by route.
func copyPrompt(t *testing.T, dir, name, route string) {
	t.Helper()
	src := filepath.Join("../../prompts", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "prompt.yaml" {
			if !strings.Contains(string(b), "\nroute: default\n") {
				t.Fatalf("%s/prompt.yaml has no route: default line to replace", src)
			}
			b = []byte(strings.Replace(string(b), "\nroute: default\n", "\nroute: "+route+"\n", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, name, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A prompt whose route the configuration does not define stops the router at
// startup, before it touches the database, in one message with every such
// problem: the prompt, its missing route and the routes that exist.
func TestPromptWithAnUndefinedRouteIsRefusedAtStartup(t *testing.T) {
	dir := t.TempDir()
	copyPrompt(t, dir, "triage", "smart")
	copyPrompt(t, dir, "invoice", "default")
	yaml := func(routes string) string {
		return fmt.Sprintf(`providers: [{name: s, type: scripted}]
routes:
%s
prompts_dir: %q
database_url: postgres://nobody@127.0.0.1:1/never
conformance: {gate: off}
log: {level: error}
`, routes, dir)
	}
	cfg, err := config.Parse([]byte(yaml("  fast: {providers: [s]}\n  default: {providers: [s], conformance_prompt: nosuch}")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(context.Background(), cfg, server.Options{})
	if err == nil {
		t.Fatal("the router started with prompt triage on the undefined route smart")
	}
	for _, want := range []string{
		filepath.Join(dir, "triage", "prompt.yaml") + `: route: prompt "triage" uses route "smart", which the configuration does not define (configured routes: default, fast)`,
		"add routes.smart to the configuration",
		`routes.default.conformance_prompt: unknown prompt "nosuch"`, // the other problem, in the same message
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("startup error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), `"invoice"`) {
		t.Errorf("startup error blames invoice, whose route exists:\n%v", err)
	}

	cfg, err = config.Parse([]byte(yaml("  smart: {providers: [s]}\n  default: {providers: [s]}")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.LoadPrompts(cfg); err != nil {
		t.Fatalf("every prompt's route is defined: %v", err)
	}
}
