package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A chat completion may name a model of a route's `models`, which is sent to
// every target of the route instead of its own; with the route's
// conformance_prompt the gate then asks for a pass of that model. `router
// conformance run --provider fallback` tests fallback with the alias too,
// recorded for (fallback, alias-model), so the gate admits fallback for a chat
// job asking for it.
func TestConformanceRunTestsRouteModelAliases(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	srv := newReferenceLLM(t)
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	provider := func(name string) string {
		return fmt.Sprintf(`  - name: %s
    type: openai
    base_url: %s/v1
    model: %s-model
    stream: false # the mock answers plain JSON only
    max_retries: 0
`, name, srv.URL, name)
	}
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`database_url: %q
prompts_dir: %q
log: {level: error}
providers:
%s%s
routes:
  default:
    providers: [primary, fallback]
    models: [alias-model]
    conformance_prompt: triage
conformance: {max_age: 168h, gate: fallbacks}
`, db.URL, prompts, provider("primary"), provider("fallback"))), 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t),
		"--provider", "fallback", "--prompt", "triage"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	for _, row := range []string{"fallback  fallback-model  triage@3  10/10  pass", "fallback  alias-model     triage@3  10/10  pass", "all 2 passed"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("the table lacks %q:\n%s", row, out.String())
		}
	}
	cases := len(mustSuites(t)["triage"].Cases)
	asked := srv.Asked() // model → requests
	seen := fmt.Sprint(asked)
	ok := len(asked) == 2 && asked["fallback-model"] == cases && asked["alias-model"] == cases
	if !ok {
		t.Errorf("requests by model %s; want %d for fallback-model and %d for alias-model", seen, cases, cases)
	}

	ps, err := loadPromptsForTest()
	if err != nil {
		t.Fatal(err)
	}
	triage, err := ps.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]string{"primary": "primary-model", "fallback": "fallback-model"}
	gate := conformance.NewGate(db.Store, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return models[id] }))
	if ok, why := gate.AllowModel(context.Background(), "fallback", "alias-model", triage, store.RoleFailover); !ok {
		t.Errorf("the gate refuses fallback for a chat job asking alias-model after the run: %s", why)
	}
	if ok, _ := gate.AllowModel(context.Background(), "primary", "alias-model", triage, store.RoleFailover); ok {
		t.Error("the gate admits primary for alias-model, which --provider fallback did not run")
	}
}
