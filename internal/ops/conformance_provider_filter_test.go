package ops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// GET /v1/conformance?provider=oai, oai having no model of its own (its runs
// are stored under its route targets' ids, oai/<model>), lists those runs, as
// `router conformance run --provider oai` runs those targets; it listed
// nothing. ?provider=main/m0, m0 being main's own model, lists the target
// main's. A target id lists itself only.
func TestConformanceProviderFilterByProviderName(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	for _, id := range []string{"main", "main/m1", "oai/gpt-4o", "oai/gpt-4o-mini", "oaix/o3"} {
		model, _ := strings.CutPrefix(id, "oai/")
		if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: id, Model: model, Prompt: "triage",
			PromptVersion: "1", Passed: true, CasesTotal: 1, CasesPassed: 1, PromptDigest: strings.Repeat("a", 64), TargetDigest: strings.Repeat("b", 64)}); err != nil {
			t.Fatal(err)
		}
	}
	srv := ops.New(ops.Config{
		Providers:    []string{"main", "main/m1", "oai/gpt-4o", "oai/gpt-4o-mini", "oaix/o3"},
		GateRoutes:   []ops.GateRoute{{Name: "default", Targets: []string{"main", "main/m1", "oai/gpt-4o", "oai/gpt-4o-mini", "oaix/o3"}}},
		TargetModels: func(id string) string { return map[string]string{"main": "m0"}[id] },
	}, db.Store, nil, nil)
	for q, want := range map[string][]string{
		"oai":        {"oai/gpt-4o", "oai/gpt-4o-mini"},
		"main/m0":    {"main"},
		"main":       {"main"},
		"oai/gpt-4o": {"oai/gpt-4o"},
		"nope":       nil,
	} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/v1/conformance?provider="+q, nil))
		var body struct {
			Results []struct {
				Provider string `json:"provider"`
			} `json:"results"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("?provider=%s: %d %s (%v)", q, rec.Code, rec.Body, err)
		}
		var got []string
		for _, r := range body.Results {
			got = append(got, r.Provider)
		}
		if !slices.Equal(got, want) {
			t.Errorf("?provider=%s lists %v, want %v", q, got, want)
		}
	}
}
