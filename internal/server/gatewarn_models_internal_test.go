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
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A chat completion naming no model alias sends each target its own model,
// and the gate judges that model; one naming a model of the route's `models`
// sends that model. For a route's conformance_prompt the start-up warning
// checked the prompt's `model` instead, and ignored the route's `models`: a
// route whose fallback passed only with the prompt's model was not named,
// though the gate refused every chat failover to it. It now checks the
// models the gate is asked for: the target's own model and each of the
// route's `models`. And the gate's refusal of the target's own model no
// longer says the run tests the route's `models` (a route may have none).
// Found in review (rconf2).
func TestStartWarningJudgesChatJobsByTheModelsTheySend(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	dir := t.TempDir()
	src, _ := filepath.Abs("../../prompts/triage")
	if err := os.CopyFS(filepath.Join(dir, "triage"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(dir, "triage", "prompt.yaml")
	b, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "route: default\n") {
		t.Fatalf("prompts/triage/prompt.yaml has no `route: default` line to add a model after:\n%s", b)
	}
	b = []byte(strings.Replace(string(b), "route: default\n", "route: default\nmodel: prompt-model\n", 1))
	if err := os.WriteFile(man, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(fmt.Sprintf(`providers:
  - {name: c-primary, type: scripted}
  - {name: c-fallback, type: scripted}
routes:
  default: {providers: [c-primary], hedge_after: "off"}
  chat: {providers: [c-primary, c-fallback], hedge_after: 1s, conformance_prompt: triage}
  aliased: {providers: [c-primary, c-fallback], hedge_after: 1s, conformance_prompt: triage, models: [alias-model]}
prompts_dir: %q
`, dir)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	set, err := LoadPrompts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	digests := conformance.TargetDigests(cfg)
	pass := func(model string) {
		t.Helper()
		if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "c-fallback", Model: model,
			Prompt: "triage", PromptVersion: p.Version, Passed: true, CasesTotal: 1, CasesPassed: 1, Duration: time.Second,
			PromptDigest: p.Digest, TargetDigest: digests("c-fallback", model, true)}); err != nil {
			t.Fatal(err)
		}
	}
	models := map[string]string{}
	for _, tg := range cfg.AllTargets() {
		models[tg.ID] = targetModel(tg)
	}
	own := models["c-fallback"]
	gate := conformance.NewGate(db.Store, cfg.Conformance.Gate, cfg.Conformance.MaxAge.D(), conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return models[id] }), conformance.TargetSettings(digests))
	warned := func() (routes []string, log string) {
		t.Helper()
		var buf bytes.Buffer
		warnGatedTargets(ctx, cfg, db.Store, set, gate, slog.New(slog.NewTextHandler(&buf, nil)))
		for _, r := range []string{"default", "chat", "aliased"} {
			if strings.Contains(buf.String(), "route "+r+":") {
				routes = append(routes, r)
			}
		}
		return routes, buf.String()
	}

	// Passed with the prompt's model only: every chat failover (own model)
	// is refused on both routes.
	pass("prompt-model")
	ok, why := gate.AllowModel(ctx, "c-fallback", own, p, store.RoleFailover)
	if ok {
		t.Fatalf("gate admitted c-fallback for chat jobs sending %s, which never ran", own)
	}
	if strings.Contains(why, "`models`") || !strings.Contains(why, "own model") ||
		!strings.Contains(why, "`router conformance run --provider c-fallback --prompt triage`") {
		t.Errorf("the gate's refusal of a chat job sending the target's own model: %q; want it to say the target's own model is sent, "+
			"and the command, without speaking of the route's `models`", why)
	}
	if got, log := warned(); strings.Join(got, ",") != "chat,aliased" {
		t.Errorf("the gate refuses every chat failover to c-fallback (%s); start-up warned of routes %v, want chat and aliased:\n%s", why, got, log)
	}

	// Passed with its own model too: only the route with an alias the
	// target never ran is named.
	pass(own)
	if ok, why := gate.AllowModel(ctx, "c-fallback", own, p, store.RoleFailover); !ok {
		t.Fatalf("after a pass with its own model: refused: %s", why)
	}
	if ok, why := gate.AllowModel(ctx, "c-fallback", "alias-model", p, store.RoleFailover); ok || !strings.Contains(why, "`models`") {
		t.Errorf("a chat job asking for alias-model: %v %q; want a refusal saying the run tests the route's `models`", ok, why)
	}
	if got, log := warned(); strings.Join(got, ",") != "aliased" {
		t.Errorf("the gate refuses chat failovers asking for alias-model; start-up warned of routes %v, want aliased alone:\n%s", got, log)
	}

	pass("alias-model")
	if got, log := warned(); len(got) != 0 {
		t.Errorf("with every model sent passed, start-up warned of routes %v:\n%s", got, log)
	}
}
