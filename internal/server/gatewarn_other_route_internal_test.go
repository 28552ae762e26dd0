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

// POST /v1/jobs takes a `route` (docs/api.md: "a route name; omitted = the
// prompt's route"), and the gate judges that route's fallbacks for the job's
// prompt. A route that no prompt's manifest names and that has no
// conformance_prompt — a "bulk" route callers send triage jobs to — has its
// fallbacks gated for every prompt, yet the start-up warning says nothing
// of it: its jobs silently never fail over.
func TestStartWarningCoversRoutesPromptJobsMayNameOnlyInTheRequest(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	prompts, _ := filepath.Abs("../../prompts")
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(fmt.Sprintf(`providers:
  - {name: g-primary, type: scripted}
  - {name: g-fallback, type: scripted}
  - {name: b-primary, type: scripted}
  - {name: b-fallback, type: scripted}
routes:
  default: {providers: [g-primary, g-fallback]}
  bulk: {providers: [b-primary, b-fallback]}
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
	// The default route's fallback passed everything: no warning for it.
	for _, name := range []string{"triage", "invoice"} {
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
	gate := conformance.NewGate(db.Store, cfg.Conformance.Gate, cfg.Conformance.MaxAge.D(), conformance.TargetSettings(conformance.TargetDigests(cfg)))
	triage, _ := set.Get("triage", "")
	// The gate refuses b-fallback for triage jobs sent with route: bulk.
	if ok, why := gate.Allow(ctx, "b-fallback", triage, store.RoleFailover); ok {
		t.Fatalf("gate admits b-fallback for triage without a run")
	} else {
		t.Logf("gate on b-fallback for triage: %s", why)
	}
	var buf bytes.Buffer
	warnGatedTargets(ctx, cfg, db.Store, set, gate, slog.New(slog.NewTextHandler(&buf, nil)))
	if !strings.Contains(buf.String(), "b-fallback") {
		t.Errorf("start logged %q; want a warning that route bulk's fallback b-fallback is gated for the prompt jobs callers may send it", buf.String())
	}
}
