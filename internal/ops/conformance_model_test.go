package ops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/ops"
)

// The operator views count a conformance run as the gate does: only a run of
// the model the target sends now (a target's id stays when its provider's
// model changes) and of the prompt content loaded now (a run recorded without
// a digest, before migration 0023, counts for any) is current and fresh; the
// others are shown with the reason. /v1/providers and the dashboard show, per
// provider × prompt version, the run of the target's model when there is one.
func TestConformanceViewsJudgeModelAndPromptContent(t *testing.T) {
	db, prompts, triage, record := ops.ConformanceFixture(t)
	ctx := context.Background()
	pass := func(provider, model, digest string) { t.Helper(); record(provider, model, digest, "") }
	pass("moved", "old", triage.Digest)    // the target now sends "new"
	pass("edited", "m", "another-content") // the prompt changed since
	pass("legacy", "m", "")                // recorded before digests
	pass("both", "new", triage.Digest)     // the target's model...
	pass("both", "old", triage.Digest)     // ...and, later, another
	models := map[string]string{"moved": "new", "edited": "m", "legacy": "m", "both": "new"}
	modelOf := func(id string) string { return models[id] }
	const (
		movedWhy  = "it passed with model old; the target now sends new: run `router conformance run --provider moved --prompt triage`"
		editedWhy = "the prompt triage@3 changed since this run; bump its version or rerun `router conformance run --provider edited --prompt triage`"
	)

	cells, err := ops.StoreConformance{Store: db.Store, MaxAge: time.Hour, Prompts: prompts, TargetModels: modelOf}.ConformanceMatrix(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		model, why string
		fresh      bool
	}{"moved": {"old", movedWhy, false}, "edited": {"m", editedWhy, false}, "legacy": {"m", "", true}, "both": {"new", "", true}}
	if len(cells) != len(want) {
		t.Fatalf("cells %+v, want one per provider", cells)
	}
	for _, c := range cells {
		w := want[c.Provider]
		if c.Model != w.model || !c.Passed || c.Fresh != w.fresh || !strings.HasSuffix(c.Detail, w.why) {
			t.Errorf("cell of %s: model %s, passed %v, fresh %v, detail %q; want model %s, fresh %v, detail ending %q",
				c.Provider, c.Model, c.Passed, c.Fresh, c.Detail, w.model, w.fresh, w.why)
		}
	}

	srv := ops.New(ops.Config{ConformanceMaxAge: time.Hour, TargetModels: modelOf}, db.Store, prompts, nil)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/v1/conformance", nil))
	var body struct {
		Results []struct {
			Provider     string `json:"provider"`
			Model        string `json:"model"`
			PromptDigest string `json:"prompt_digest"`
			Fresh        bool   `json:"fresh"`
			Current      *bool  `json:"current"`
			Reason       string `json:"reason"`
		} `json:"results"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s (%v)", rec.Code, rec.Body, err)
	}
	type row struct {
		fresh, current bool
		reason         string
	}
	got := map[string]row{}
	for _, r := range body.Results {
		got[r.Provider+"/"+r.Model] = row{r.Fresh, r.Current != nil && *r.Current, r.Reason}
	}
	for k, w := range map[string]row{
		"moved/old": {false, false, movedWhy},
		"edited/m":  {false, false, editedWhy},
		"legacy/m":  {true, true, ""},
		"both/new":  {true, true, ""},
		"both/old":  {false, false, "it passed with model old; the target now sends new: run `router conformance run --provider both --prompt triage`"},
	} {
		if got[k] != w {
			t.Errorf("/v1/conformance %s: %+v, want %+v", k, got[k], w)
		}
	}
	if len(got) != 5 {
		t.Errorf("/v1/conformance: %s, want one result per provider × model", rec.Body)
	}
}
