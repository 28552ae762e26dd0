package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The start-up warning judges every route for every prompt (a job may name
// any route), so a configuration of many routes and prompts must not log a
// line per route × prompt, nor lines of every prompt's name: a route's
// warning names at most warnedPrompts prompts (then their number, and a
// command running every prompt), at most warnedRoutes routes are warned of
// one by one, and one line gives the number of the rest. A route no
// manifest names says its jobs reach it by naming it in `route`.
func TestStartWarningStaysShortForManyRoutesAndPrompts(t *testing.T) {
	const warnedPrompts, warnedRoutes = 8, 20 // as gatewarn.go has them
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	dir := t.TempDir()
	src, _ := filepath.Abs("../../prompts/triage")
	const nPrompts = warnedPrompts + 3
	for i := range nPrompts {
		name := fmt.Sprintf("p%02d", i)
		if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		manifest := filepath.Join(dir, name, "prompt.yaml")
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte("name: triage\n"), []byte("name: "+name+"\n"), 1)
		if i == 0 { // p00's own route is r01; every other prompt's is default
			b = bytes.Replace(b, []byte("route: default\n"), []byte("route: r01\n"), 1)
		}
		if err := os.WriteFile(manifest, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	routes := "  default: {providers: [g-primary, g-fallback]}\n"
	const nRoutes = warnedRoutes + 3
	for i := 1; i < nRoutes; i++ {
		routes += fmt.Sprintf("  r%02d: {providers: [g-primary, g-fallback]}\n", i)
	}
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(fmt.Sprintf("providers:\n  - {name: g-primary, type: scripted}\n  - {name: g-fallback, type: scripted}\nroutes:\n%sprompts_dir: %q\n", routes, dir)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	set, err := LoadPrompts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(set.All()); got != nPrompts {
		t.Fatalf("%d prompts loaded, want %d", got, nPrompts)
	}
	gate := conformance.NewGate(db.Store, cfg.Conformance.Gate, cfg.Conformance.MaxAge.D())
	var buf bytes.Buffer
	warnGatedTargets(ctx, cfg, db.Store, set, gate, slog.New(slog.NewTextHandler(&buf, nil)))
	lines := strings.FieldsFunc(buf.String(), func(r rune) bool { return r == '\n' })
	t.Logf("start logged:\n%s", buf.String())
	if len(lines) != warnedRoutes+1 {
		t.Fatalf("start logged %d lines, want %d (one per route up to %d, then one for the rest):\n%s", len(lines), warnedRoutes+1, warnedRoutes, buf.String())
	}
	for i, line := range lines[:warnedRoutes] {
		forPrompts := fmt.Sprintf("are gated for %d prompts (p00, p01, p02, p03, p04, p05, p06, p07 and 3 more) until `router conformance run --provider g-fallback` passes on them", nPrompts)
		if !strings.Contains(line, forPrompts) || strings.Contains(line, "p10") {
			t.Errorf("line %d: %s\nwant it to say %q and name no more prompts", i, line, forPrompts)
		}
		// The prompts' jobs reach a route that is not their own only by
		// naming it.
		byRequest := "is no gated prompt's own: its jobs of them are those that name it in `route`"
		switch {
		case strings.Contains(line, "route default:"):
			byRequest = "(p00 reach route default only from jobs that name it in `route`: their own route is another)"
		case strings.Contains(line, "route r01:"):
			byRequest = "(p01, p02, p03, p04, p05, p06, p07, p08 and 2 more reach route r01 only from jobs that name it in `route`"
		}
		if !strings.Contains(line, byRequest) {
			t.Errorf("line %d: %s\nwant it to say %q", i, line, byRequest)
		}
	}
	if last := lines[warnedRoutes]; !strings.Contains(last, "3 more routes have targets the conformance gate keeps out") {
		t.Errorf("last line: %s\nwant it to count the 3 routes not warned of", last)
	}
}
