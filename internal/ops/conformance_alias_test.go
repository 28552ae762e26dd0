package ops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// viewRow is one /v1/conformance result, as these tests read it.
type viewRow struct {
	fresh, current bool
	reason         string
}

// conformanceView is GET /v1/conformance of cfg, by provider/model.
func conformanceView(t *testing.T, cfg ops.Config, st *store.Store, prompts *prompt.Set) map[string]viewRow {
	t.Helper()
	rec := httptest.NewRecorder()
	ops.New(cfg, st, prompts, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/v1/conformance", nil))
	var body struct {
		Results []struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
			Fresh    bool   `json:"fresh"`
			Current  *bool  `json:"current"`
			Reason   string `json:"reason"`
		} `json:"results"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s (%v)", rec.Code, rec.Body, err)
	}
	out := map[string]viewRow{}
	for _, r := range body.Results {
		out[r.Provider+"/"+r.Model] = viewRow{r.Fresh, r.Current != nil && *r.Current, r.Reason}
	}
	return out
}

func passRun(t *testing.T, st *store.Store, provider, model string, p *prompt.Prompt) {
	t.Helper()
	if _, err := st.RecordConformanceRun(context.Background(), store.NewConformanceRun{Provider: provider, Model: model, Prompt: p.Name,
		PromptVersion: p.Version, PromptDigest: p.Digest, TargetDigest: strings.Repeat("b", 64), Passed: true, CasesTotal: 1, CasesPassed: 1}); err != nil {
		t.Fatal(err)
	}
}

// `router conformance run` records, for a chat route with a
// conformance_prompt and `models: [alias-model]`, a row "fallback
// alias-model triage@3" (docs/conformance.md, Model aliases), and the gate
// admits fallback for a chat completion asking for alias-model with it. The
// operator views count that run as current and fresh too; a run of a model
// no route asks of the target still does not count, and a target that is not
// on the route gets no aliases.
func TestConformanceViewsCountChatAliasRuns(t *testing.T) {
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	triage, _ := prompts.Get("triage", "")
	ctx := context.Background()
	passRun(t, db.Store, "fallback", "alias-model", triage)
	passRun(t, db.Store, "fallback", "other-model", triage)
	passRun(t, db.Store, "solo", "alias-model", triage)
	models := map[string]string{"fallback": "fallback-model", "solo": "solo-model"}
	modelOf := func(id string) string { return models[id] }
	routes := []conformance.ChatRoute{{Name: "chat", Targets: []string{"fallback"}, Prompt: "triage", Models: []string{"alias-model"}}}

	gate := conformance.NewGate(db.Store, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0), conformance.TargetModels(modelOf))
	if ok, why := gate.AllowModel(ctx, "fallback", "alias-model", triage, store.RoleFailover); !ok {
		t.Fatalf("gate refuses the alias: %s", why)
	}

	got := conformanceView(t, ops.Config{ConformanceMaxAge: time.Hour, TargetModels: modelOf, ChatRoutes: routes}, db.Store, prompts)
	for k, w := range map[string]viewRow{
		"fallback/alias-model": {true, true, ""},
		"fallback/other-model": {false, false, "it passed with model other-model; the target now sends fallback-model (and, asked by a chat completion, alias-model): " +
			"run `router conformance run --provider fallback --prompt triage`"},
		"solo/alias-model": {false, false, "it passed with model alias-model; the target now sends solo-model: run `router conformance run --provider solo --prompt triage`"},
	} {
		if got[k] != w {
			t.Errorf("/v1/conformance %s: %+v, want %+v", k, got[k], w)
		}
	}

	// The matrix (/v1/providers, the dashboard) shows, per provider × prompt
	// version, the target's own model before a chat route's, before another.
	matrix := ops.StoreConformance{Store: db.Store, MaxAge: time.Hour, Prompts: prompts, TargetModels: modelOf, ChatRoutes: routes}
	cellOf := func(provider string) ops.ConformanceCell {
		t.Helper()
		cells, err := matrix.ConformanceMatrix(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			if c.Provider == provider {
				return c
			}
		}
		t.Fatalf("no cell for %s in %+v", provider, cells)
		return ops.ConformanceCell{}
	}
	if c := cellOf("fallback"); c.Model != "alias-model" || !c.Fresh || strings.Contains(c.Detail, ";") {
		t.Errorf("cell of fallback %+v, want the alias-model run, fresh, without a reason", c)
	}
	passRun(t, db.Store, "fallback", "fallback-model", triage)
	if c := cellOf("fallback"); c.Model != "fallback-model" || !c.Fresh {
		t.Errorf("cell of fallback %+v, want the target's own fallback-model run, fresh", c)
	}
}

// A chat completion on a route gated by a prompt that names a model of its
// own, asking for no alias, sends the target's own model; `router
// conformance run` tests that model too (addAliasRuns) and the gate admits
// with it. The views count that run on the route's targets only.
func TestConformanceViewsCountTheTargetsOwnModelOnAChatRoute(t *testing.T) {
	db := testdb.New(t, store.Options{})
	dir := filepath.Join(t.TempDir(), "triage")
	if err := os.CopyFS(dir, os.DirFS("../../prompts/triage")); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "prompt.yaml")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nroute: default\n") {
		t.Fatal("prompts/triage/prompt.yaml lacks \"route: default\"")
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(b), "\nroute: default\n", "\nroute: default\nmodel: prompt-model\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	prompts, err := prompt.LoadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	triage, _ := prompts.Get("triage", "")
	passRun(t, db.Store, "fallback", "fallback-model", triage)
	passRun(t, db.Store, "solo", "solo-model", triage)
	models := map[string]string{"fallback": "fallback-model", "solo": "solo-model"}
	modelOf := func(id string) string { return models[id] }
	routes := []conformance.ChatRoute{{Name: "chat", Targets: []string{"fallback"}, Prompt: "triage"}}

	got := conformanceView(t, ops.Config{ConformanceMaxAge: time.Hour, TargetModels: modelOf, ChatRoutes: routes}, db.Store, prompts)
	for k, w := range map[string]viewRow{
		"fallback/fallback-model": {true, true, ""},
		"solo/solo-model":         {false, false, "it passed with model solo-model; the target now sends prompt-model: run `router conformance run --provider solo --prompt triage`"},
	} {
		if got[k] != w {
			t.Errorf("/v1/conformance %s: %+v, want %+v", k, got[k], w)
		}
	}
}
