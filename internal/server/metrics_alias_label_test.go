package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An attempt that sends a route's `models` alias in place of its target's
// own model is counted in /metrics under the breaker that admits and counts
// it — llm/alias, as /v1/providers counts it — not under the target llm,
// whose own model's series it would mix into; and llm/alias's race series
// exist at 0 from start-up, as each target's do. Before, a tenant's alias
// meeting 404s showed as model_not_found on a healthy llm whose breaker
// stayed closed, and llm/alias, whose breaker opened, had no series.
// Found by review (rops MEDIUM 3).
func TestMetricsCountAnAliasAttemptUnderItsBreaker(t *testing.T) {
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"The model alias does not exist","type":"invalid_request_error","code":"model_not_found"}}`)
	}))
	defer llm.Close()
	db := testdb.New(t, store.Options{})
	cfg := newConfig(t, db, llm.URL, "")
	cfg.Routes["default"].Models = []string{"alias"}
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tenant, ops := httptest.NewServer(srv.Handler), httptest.NewServer(srv.OpsHandler)
	defer tenant.Close()
	defer ops.Close()

	_, metrics := get(t, ops.URL+"/metrics", "")
	for _, series := range []string{
		`router_attempts_started_total{provider="llm/alias",role="primary"} 0`,
		`router_races_lost_total{provider="llm/alias"} 0`,
	} {
		if !strings.Contains(metrics, series) {
			t.Errorf("at start-up /metrics lacks %s: the alias breaker's series do not exist at 0", series)
		}
	}

	req, _ := http.NewRequest(http.MethodPost, tenant.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"alias","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+tenantKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("chat answered %d %s, want the provider's failure", resp.StatusCode, body)
	}
	// The job failed once its only attempt's result reached the race, which
	// the attempt reports after the Observer heard its end: the answer
	// comes after the count.
	_, metrics = get(t, ops.URL+"/metrics", "")
	if want := `router_attempt_errors_total{kind="model_not_found",provider="llm/alias"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("the alias attempt's error is not counted under its breaker llm/alias (want %s)", want)
	}
	if bad := `router_attempt_errors_total{kind="model_not_found",provider="llm"}`; strings.Contains(metrics, bad) {
		t.Errorf("the alias attempt's error is counted under the target llm, whose model answered nothing")
	}
	if want := `router_attempts_started_total{provider="llm/alias",role="primary"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("the alias attempt's start is not counted under llm/alias (want %s)", want)
	}
	if want := `router_attempts_started_total{provider="llm",role="primary"} 0`; !strings.Contains(metrics, want) {
		t.Errorf("the target llm's started count is not 0 (want %s)", want)
	}
}
