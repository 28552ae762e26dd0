package ops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// GET /v1/conformance?provider= (a filter given but naming nothing: a
// monitoring script's `?provider=$P` with $P unset) is read as no filter and
// answers every provider's results, 200. A check "did provider P pass?"
// then sees other providers' passes. `router conformance run --provider ""`
// is refused (exit 2) for exactly this reason (docs/operations.md), and the
// endpoint already refuses an unknown, repeated or undecodable parameter
// (400 invalid-query) because "a filter dropped silently lists more than the
// caller asked for" (internal/ops/server.go checkQuery).
func TestConformanceRefusesEmptyFilter(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv := httptest.NewServer(ops.New(ops.Config{Key: opsKey}, db.Store, nil, nil))
	defer srv.Close()
	ctx := context.Background()
	for _, p := range []string{"healthy", "other"} {
		if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: p, Model: "m", Prompt: "triage",
			PromptVersion: "1", Passed: true, CasesTotal: 1, CasesPassed: 1, PromptDigest: strings.Repeat("a", 64), TargetDigest: strings.Repeat("b", 64)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"provider=", "prompt=", "provider=&prompt=triage"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/conformance?"+q, nil)
		req.Header.Set("Authorization", "Bearer "+opsKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Results []struct {
				Provider string `json:"provider"`
			} `json:"results"`
			Type string `json:"type"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /v1/conformance?%s: %d with %d results (%+v); want 400 invalid-query: a filter naming nothing is not no filter",
				q, resp.StatusCode, len(body.Results), body.Results)
		}
	}
}

// The refusal names the parameter and what to do; `details=` (empty) and a
// blank filter are refused as well, not read as false or as a name.
func TestConformanceEmptyFilterSaysWhichAndHow(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv := httptest.NewServer(ops.New(ops.Config{Key: opsKey}, db.Store, nil, nil))
	defer srv.Close()
	for q, want := range map[string]string{
		"provider=":          "provider is given but empty",
		"prompt=%20":         "prompt is given but empty",
		"details=":           `details must be true or false, got ""`,
		"provider=x&prompt=": "leave the parameter out",
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/conformance?"+q, nil)
		req.Header.Set("Authorization", "Bearer "+opsKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Type, Detail string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.HasSuffix(body.Type, "invalid-query") || !strings.Contains(body.Detail, want) {
			t.Errorf("GET /v1/conformance?%s: %d %+v; want 400 invalid-query saying %q", q, resp.StatusCode, body, want)
		}
	}
}
