package conformance_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// apiResult is an entry of GET /v1/conformance, as far as these tests read it.
type apiResult struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	Prompt        string `json:"prompt"`
	PromptVersion string `json:"prompt_version"`
	PromptDigest  string `json:"prompt_digest"`
	Passed        bool   `json:"passed"`
	Fresh         bool   `json:"fresh"`
	Current       *bool  `json:"current"`
	Reason        string `json:"reason"`
}

func listConformance(t *testing.T, e *env, prompts *prompt.Set, modelOf func(string) string) []apiResult {
	t.Helper()
	srv := ops.New(ops.Config{ConformanceMaxAge: 168 * time.Hour, TargetModels: modelOf}, e.st, prompts, nil)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/v1/conformance?provider=fallback&prompt=triage", nil))
	var body struct {
		Results []apiResult `json:"results"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
		t.Fatalf("GET /v1/conformance: %d %s", rec.Code, rec.Body)
	}
	return body.Results
}

// The operator views (/v1/providers and the dashboard through
// StoreConformance, /v1/conformance) show a fresh pass exactly when the gate
// admits it (docs/conformance.md "The gate"): after a target's model changes
// in the configuration, or its prompt's content changes without a version
// bump, the old pass is shown, but not as fresh nor current, with the reason.
// Found by review: the views ignored the model.
func TestOperatorViewsFollowTheTargetsModelAndPrompt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("fallback", oracle(e.answers, nil))
	e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}})
	triage := mustPrompt(t, e, "triage")
	modelOf := func(id string) string { return e.targets[id].Model }
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0), conformance.TargetModels(modelOf))

	// agree checks that the view's cell and the gate decide alike, and
	// returns the cell.
	agree := func(step string, prompts *prompt.Set) ops.ConformanceCell {
		t.Helper()
		cells, err := ops.StoreConformance{Store: e.st, MaxAge: 168 * time.Hour, Prompts: prompts, TargetModels: modelOf}.ConformanceMatrix(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) != 1 || cells[0].Provider != "fallback" || cells[0].Prompt != "triage" {
			t.Fatalf("%s: cells %+v, want one, of fallback on triage", step, cells)
		}
		p, _ := prompts.Get("triage", "")
		ok, why := gate.Allow(ctx, "fallback", p, store.RoleFailover)
		if c := cells[0]; (c.Passed && c.Fresh) != ok {
			t.Errorf("%s: /v1/providers shows fallback (model %s) on %s@%s passed=%v fresh=%v (%s), but the gate admits=%v (%s)",
				step, c.Model, c.Prompt, c.PromptVersion, c.Passed, c.Fresh, c.Detail, ok, why)
		}
		return cells[0]
	}

	// The operator changes providers[fallback].model; the target id stays.
	e.targets["fallback"].Model = "new-untested-model"
	const because = "it passed with model fallback-model; the target now sends new-untested-model: " +
		"run `router conformance run --provider fallback --prompt triage`"
	if ok, why := gate.Allow(ctx, "fallback", triage, store.RoleFailover); ok ||
		why != "no passing conformance run for triage@3 with model new-untested-model ("+because+")" {
		t.Fatalf("gate on the new model: %v %q", ok, why)
	}
	if c := agree("model changed", e.prompts); c.Model != "fallback-model" || !strings.Contains(c.Detail, because) {
		t.Errorf("model changed: cell %+v, want the old model's run saying %q", c, because)
	}
	rs := listConformance(t, e, e.prompts, modelOf)
	if len(rs) != 1 || !rs[0].Passed || rs[0].Fresh || rs[0].Current == nil || *rs[0].Current || rs[0].Reason != because {
		t.Errorf("/v1/conformance after the model changed: %+v; want the old model's pass, not fresh, not current, reason %q", rs, because)
	}

	// The new model passes: it counts, the old model's run stays listed.
	e.run(t, conformance.Options{Providers: []string{"fallback"}, PromptNames: []string{"triage"}})
	if c := agree("new model passed", e.prompts); c.Model != "new-untested-model" || !c.Passed || !c.Fresh {
		t.Errorf("new model passed: cell %+v, want the new model's fresh pass", c)
	}
	rs = listConformance(t, e, e.prompts, modelOf)
	fresh := map[string]bool{}
	for _, r := range rs {
		fresh[r.Model] = r.Fresh && r.Current != nil && *r.Current
	}
	if len(rs) != 2 || !fresh["new-untested-model"] || fresh["fallback-model"] {
		t.Errorf("/v1/conformance after the new model passed: %+v; want both models, only the new one fresh and current", rs)
	}

	// The prompt is edited without a version bump.
	edited := editedPrompts(t)
	const changed = "the prompt triage@3 changed since this run; bump its version or rerun `router conformance run --provider fallback --prompt triage`"
	if c := agree("prompt edited", edited); c.Fresh || !strings.Contains(c.Detail, changed) {
		t.Errorf("prompt edited: cell %+v, want not fresh, saying %q", c, changed)
	}
	for _, r := range listConformance(t, e, edited, modelOf) {
		if r.Fresh || *r.Current {
			t.Errorf("/v1/conformance for the edited prompt: %+v is fresh or current", r)
		}
		if r.Model == "new-untested-model" && r.Reason != changed {
			t.Errorf("/v1/conformance for the edited prompt: reason %q, want %q", r.Reason, changed)
		}
	}
}
