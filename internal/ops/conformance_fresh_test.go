package ops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// GET /v1/conformance says whether each result's last pass is fresh (younger
// than conformance.max_age on the database clock), the flag the failover gate
// judges it by, and gives max_age beside the results.
func TestListConformanceSaysWhetherThePassIsFresh(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv := httptest.NewServer(ops.New(ops.Config{Key: opsKey, ConformanceMaxAge: time.Hour}, db.Store, nil, nil))
	defer srv.Close()
	ctx := context.Background()
	for _, p := range []string{"young", "old"} {
		if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: p, Model: "m", Prompt: "triage",
			PromptVersion: "2", Passed: true, CasesTotal: 1, CasesPassed: 1, PromptDigest: strings.Repeat("a", 64), TargetDigest: strings.Repeat("b", 64)}); err != nil {
			t.Fatal(err)
		}
	}
	// A pass two hours old on the database clock, past the 1h max_age.
	if _, err := db.Pool.Exec(ctx, `UPDATE conformance_runs SET started_at = now() - interval '2 hours',
		finished_at = now() - interval '2 hours' WHERE provider = 'old'`); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/conformance", nil)
	req.Header.Set("Authorization", "Bearer "+opsKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		MaxAge  string `json:"max_age"`
		Results []struct {
			Provider string `json:"provider"`
			Fresh    *bool  `json:"fresh"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(body.Results) != 2 {
		t.Fatalf("%d: %+v", resp.StatusCode, body)
	}
	fresh := map[string]string{}
	for _, r := range body.Results {
		fresh[r.Provider] = "absent"
		if r.Fresh != nil {
			fresh[r.Provider] = strconv.FormatBool(*r.Fresh)
		}
	}
	if fresh["young"] != "true" || fresh["old"] != "false" {
		t.Fatalf("fresh by provider: %v, want young true and old false (the gate's verdict)", fresh)
	}
	if body.MaxAge != "1h0m0s" {
		t.Fatalf("max_age %q, want 1h0m0s", body.MaxAge)
	}
}
