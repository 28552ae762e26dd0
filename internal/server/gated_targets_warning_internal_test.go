package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// With the default gate (conformance.gate: fallbacks), a new deployment's
// jobs never failed over or hedged — no fallback had a passing conformance
// run — and nothing said so: no start-up line, /v1/providers showing the
// fallback eligible. The router now warns at start, once per route, naming
// the gated targets and the command that admits them; a target with fresh
// passes of the route's prompts is not named, a gate that is off warns of
// nothing, and a database that cannot be read is logged, not waited for.
// Found in a newcomer's walkthrough.
func TestStartWarnsOfRoutesWhoseFallbacksTheGateKeepsOut(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	prompts, _ := filepath.Abs("../../prompts")
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(fmt.Sprintf(`providers:
  - {name: g-primary, type: scripted}
  - {name: g-fallback, type: scripted}
routes:
  default: {providers: [g-primary, g-fallback], hedge_after: 1s}
prompts_dir: %q
`, prompts)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	set, err := LoadPrompts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	warnings := func(ctx context.Context, mode string) []string {
		t.Helper()
		var buf bytes.Buffer
		gate := conformance.NewGate(db.Store, mode, cfg.Conformance.MaxAge.D())
		warnGatedTargets(ctx, cfg, db.Store, set, gate, slog.New(slog.NewTextHandler(&buf, nil)))
		return strings.FieldsFunc(buf.String(), func(r rune) bool { return r == '\n' })
	}

	got := warnings(ctx, cfg.Conformance.Gate)
	want := "route default: fallbacks g-fallback are gated until `router conformance run --provider g-fallback --prompt invoice,triage` passes on them (conformance.gate: fallbacks)"
	if len(got) != 1 || !strings.Contains(got[0], "level=WARN") || !strings.Contains(got[0], want) ||
		!strings.Contains(got[0], "do not fail over or hedge to them") || strings.Contains(got[0], "g-primary") {
		t.Errorf("start of a deployment without conformance runs logged %q, want one warning saying %q", got, want)
	}

	record := func(name string) {
		t.Helper()
		p, err := set.Get(name, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "g-fallback", Model: "scripted-g-fallback",
			Prompt: name, PromptVersion: p.Version, Passed: true, CasesTotal: 1, CasesPassed: 1, Duration: time.Second,
			PromptDigest: p.Digest, TargetDigest: conformance.TargetDigests(cfg)("g-fallback", "scripted-g-fallback", true)}); err != nil {
			t.Fatal(err)
		}
	}
	record("triage")
	if got := warnings(ctx, cfg.Conformance.Gate); len(got) != 1 || !strings.Contains(got[0], "--provider g-fallback --prompt invoice`") {
		t.Errorf("with triage passed, start logged %q, want the warning to name only invoice", got)
	}
	record("invoice")
	if got := warnings(ctx, cfg.Conformance.Gate); len(got) != 0 {
		t.Errorf("with every prompt of the route passed, start logged %q, want nothing", got)
	}

	if got := warnings(ctx, conformance.GateAll); len(got) != 1 || !strings.Contains(got[0], "route default: targets g-primary are gated") {
		t.Errorf("gate all, the primary never run: start logged %q, want a warning naming g-primary", got)
	}
	if got := warnings(ctx, conformance.GateOff); len(got) != 0 {
		t.Errorf("gate off: start logged %q, want nothing", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if got := warnings(cancelled, conformance.GateAll); len(got) != 1 || !strings.Contains(got[0], "could not check") {
		t.Errorf("database not read: start logged %q, want one line saying the check was given up", got)
	}
}
