package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A serving router tells its conformance gate and its operator views each
// target's settings digest (conformance.TargetDigests): a pass recorded on
// other settings (the target since repointed to another endpoint) admits no
// gated attempt and is shown as not fresh, and a pass on the target's
// settings of now admits it. Without the wiring the gate and the views
// ignored the digest the runs record.
func TestServedGateAndViewsJudgeTheTargetsSettings(t *testing.T) {
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	close(llm.release) // answer at once
	cfg := newConfig(t, db, llm.srv.URL, "")
	cfg.Conformance.Gate = conformance.GateAll // the primary needs a pass too
	ctx := context.Background()
	prompts, err := server.LoadPrompts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	triage, err := prompts.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	record := func(digest string) {
		t.Helper()
		if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "llm", Model: "m", Prompt: "triage",
			PromptVersion: "3", Passed: true, CasesTotal: 1, CasesPassed: 1, PromptDigest: triage.Digest, TargetDigest: digest,
			Duration: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	record(strings.Repeat("a", 64)) // a pass on other settings

	// start serves cfg; each router's gate reads the database afresh (its
	// cache is its own).
	start := func() (tenantURL, opsURL string) {
		t.Helper()
		srv, err := server.New(ctx, cfg, server.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tenant, ops := httptest.NewServer(srv.Handler), httptest.NewServer(srv.OpsHandler)
		t.Cleanup(func() { tenant.Close(); ops.Close(); srv.Close() })
		return tenant.URL, ops.URL
	}
	tenantURL, opsURL := start()

	post := func(key string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, tenantURL+"/v1/jobs",
			strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
		req.Header.Set("Authorization", "Bearer "+tenantKey)
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Prefer", "wait=60")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const changed = "the endpoint or settings of target llm changed"
	if status, body := post("target-digest-1"); status != http.StatusServiceUnavailable || !strings.Contains(body, changed) {
		t.Fatalf("a job with only a pass on other settings: %d %s; want 503 saying %q", status, body, changed)
	}
	if _, body := get(t, opsURL+"/v1/conformance", ""); !strings.Contains(body, `"fresh":false`) || !strings.Contains(body, changed) {
		t.Fatalf("/v1/conformance with only a pass on other settings: %s; want fresh false saying %q", body, changed)
	}
	if _, body := get(t, opsURL+"/dashboard", ""); !strings.Contains(body, "pass (target changed)") {
		t.Errorf("the dashboard does not say the pass is on changed target settings")
	}

	record(conformance.TargetDigests(cfg)("llm", "m", true)) // a pass on the settings of now
	tenantURL, _ = start()
	if status, body := post("target-digest-2"); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("a job with a pass on the target's settings: %d %s; want it run", status, body)
	}
}
