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
	"github.com/routerhq/router/internal/store"
)

// A fresh pass of a prompt version that is not loaded (triage@1 while @2 is)
// is not one the gate admits: GET /v1/conformance lists it with current and
// fresh both false, while the loaded version's pass is fresh.
func TestListConformanceFreshOnlyForTheLoadedVersion(t *testing.T) {
	db, prompts, triage, pass := ops.ConformanceFixture(t)
	if triage.Version != "3" {
		t.Fatalf("precondition: triage@%s loaded, want @3", triage.Version)
	}
	target := strings.Repeat("b", 64)
	pass("backup", "m", triage.Digest, target) // triage@3, the loaded version
	if _, err := db.Store.RecordConformanceRun(context.Background(), store.NewConformanceRun{Provider: "backup", Model: "m",
		Prompt: "triage", PromptVersion: "1", PromptDigest: triage.Digest, TargetDigest: target,
		Passed: true, CasesTotal: 1, CasesPassed: 1}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ops.New(ops.Config{Key: "key-ops", ConformanceMaxAge: time.Hour}, db.Store, prompts, nil))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/conformance?prompt=triage", nil)
	req.Header.Set("Authorization", "Bearer key-ops")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Results []struct {
			Version string `json:"prompt_version"`
			Current *bool  `json:"current"`
			Fresh   bool   `json:"fresh"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(body.Results) != 2 {
		t.Fatalf("%d: %+v, want the two versions' runs", resp.StatusCode, body)
	}
	for _, r := range body.Results {
		current := r.Current != nil && *r.Current
		want := r.Version == "3"
		if r.Fresh != want || current != want {
			t.Errorf("triage@%s: fresh %v, current %v; want both %v (loaded: triage@3)", r.Version, r.Fresh, current, want)
		}
	}
}
