package ops_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func TestListConformance(t *testing.T) {
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ops.New(ops.Config{Key: opsKey}, db.Store, prompts, nil))
	defer srv.Close()
	ctx := context.Background()
	for _, r := range []store.NewConformanceRun{
		{Provider: "p1", Model: "m1", Prompt: "triage", PromptVersion: "3", Passed: true, CasesTotal: 10, CasesPassed: 10,
			Cases: []map[string]any{{"name": "a", "passed": true}}, RouterVersion: "v-test", Duration: 2 * time.Second},
		{Provider: "p1", Model: "m1", Prompt: "triage", PromptVersion: "3", CasesTotal: 10, CasesPassed: 9, RouterVersion: "v-test"},
		{Provider: "p1", Model: "m1", Prompt: "triage", PromptVersion: "0", Passed: true, CasesTotal: 10, CasesPassed: 10},
		{Provider: "p2", Model: "m2", Prompt: "invoice", PromptVersion: "2", Passed: true, CasesTotal: 9, CasesPassed: 9},
	} {
		r.PromptDigest, r.TargetDigest = strings.Repeat("a", 64), strings.Repeat("b", 64)
		if p, err := prompts.Get(r.Prompt, ""); err == nil && p.Version == r.PromptVersion {
			r.PromptDigest = p.Digest // the content loaded now
		}
		if _, err := db.Store.RecordConformanceRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path, key string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v: %s", path, err, raw)
		}
		return resp.StatusCode, m
	}
	if status, _ := get("/v1/conformance", ""); status != http.StatusUnauthorized {
		t.Fatalf("without a key: %d", status)
	}
	if status, _ := get("/v1/conformance", "wrong"); status != http.StatusUnauthorized {
		t.Fatalf("unknown key: %d", status)
	}
	status, body := get("/v1/conformance", opsKey)
	results, _ := body["results"].([]any)
	if status != http.StatusOK || len(results) != 3 {
		t.Fatalf("%d %v", status, body)
	}
	// Ordered by provider, prompt, version: p1 triage@0, p1 triage@3, p2 invoice@2.
	r0, r1, r2 := results[0].(map[string]any), results[1].(map[string]any), results[2].(map[string]any)
	if r0["prompt_version"] != "0" || r0["current"] != false || r0["passed"] != true {
		t.Fatalf("old version: %v", r0)
	}
	if r1["prompt_version"] != "3" || r1["passed"] != false || r1["cases_passed"] != 9.0 || r1["current"] != true ||
		r1["last_pass_at"] == nil || r1["router_version"] != "v-test" || r1["started_at"] == nil || r1["cases"] != nil {
		t.Fatalf("latest of triage@3: %v", r1)
	}
	if r2["provider"] != "p2" || r2["passed"] != true || r2["model"] != "m2" {
		t.Fatalf("p2: %v", r2)
	}
	_, body = get("/v1/conformance?provider=p1&prompt=triage&details=true", opsKey)
	results, _ = body["results"].([]any)
	if len(results) != 2 || results[1].(map[string]any)["cases"] == nil {
		t.Fatalf("filtered with details: %v", body)
	}
	if status, _ := get("/v1/conformance?details=maybe", opsKey); status != http.StatusBadRequest {
		t.Fatalf("bad details: %d", status)
	}
	// The bad value is quoted clipped: a 200 KB one is not echoed whole.
	status, body = get("/v1/conformance?details="+strings.Repeat("y", 200_000), opsKey)
	if detail, _ := body["detail"].(string); status != http.StatusBadRequest || len(detail) > 512 || !strings.Contains(detail, "true or false") {
		t.Fatalf("a 200 KB details value: %d, detail of %d bytes: %.200s", status, len(detail), detail)
	}
}
