package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const (
	tenantKey   = "tenant-key"
	operatorKey = "operator-key"
	validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`
)

// fakeLLM speaks OpenAI's chat completions; each call announces itself on
// arrived and answers once release is closed.
type fakeLLM struct {
	srv     *httptest.Server
	arrived chan struct{}
	release chan struct{}
}

func newFakeLLM(t *testing.T) *fakeLLM {
	f := &fakeLLM{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.arrived <- struct{}{}
		select {
		case <-f.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":%d,"model":%q,
			"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`, time.Now().Unix(), req.Model, validTriage)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// newConfig is a router configuration on the test's schema with one openai
// provider at llmURL; extra is appended YAML.
func newConfig(t *testing.T, db *testdb.DB, llmURL, extra string) *config.Config {
	t.Helper()
	t.Setenv("SERVER_TEST_KEY", tenantKey)
	prompts, _ := filepath.Abs("../../prompts")
	yaml := fmt.Sprintf(`api_keys: [{owner: acme, key_env: SERVER_TEST_KEY}]
providers:
  - {name: llm, type: openai, base_url: %q, model: m, timeout: 1m, max_retries: 0, stream: false} # the fake answers plain JSON
routes:
  default: {providers: [llm]}
prompts_dir: %q
conformance: {gate: off}
log: {level: warn}
%s`, llmURL+"/v1", prompts, extra)
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	return cfg
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// SPEC §17: the operator surface is not on the tenant listener; the tenant API
// is not on the operator listener.
func TestTenantListenerDoesNotServeTheOperatorSurface(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv, err := server.New(context.Background(), newConfig(t, db, newFakeLLM(t).srv.URL, ""), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tenant, ops := httptest.NewServer(srv.Handler), httptest.NewServer(srv.OpsHandler)
	defer tenant.Close()
	defer ops.Close()
	for _, path := range []string{"/dashboard", "/metrics", "/v1/providers", "/v1/conformance"} {
		if status, body := get(t, tenant.URL+path, tenantKey); status != http.StatusNotFound {
			t.Errorf("tenant %s: %d %s, want 404", path, status, body)
		}
		if status, body := get(t, ops.URL+path, ""); status != http.StatusOK {
			t.Errorf("ops %s: %d %s, want 200", path, status, body)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, body := get(t, tenant.URL+path, ""); status != http.StatusOK {
			t.Errorf("tenant %s: %d %s", path, status, body)
		}
	}
	if status, _ := get(t, ops.URL+"/v1/jobs/x", tenantKey); status != http.StatusNotFound {
		t.Errorf("ops serves the tenant API: %d", status)
	}
	// The webhook delivery counter is on the operator's /metrics from the
	// start, every outcome at 0.
	if _, body := get(t, ops.URL+"/metrics", ""); !strings.Contains(body, `router_webhook_deliveries_total{outcome="abandoned"} 0`) {
		t.Errorf("/metrics has no router_webhook_deliveries_total{outcome=\"abandoned\"} 0")
	}
}

// SPEC §17: off loopback the operator surface needs a key: without one the
// router refuses to start; with one, every operator request must carry it.
func TestOperatorKeyOffLoopback(t *testing.T) {
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	cfg := newConfig(t, db, llm.srv.URL, "")
	cfg.OpsListen = "0.0.0.0:0" // as if Validate had been bypassed
	if _, err := server.New(context.Background(), cfg, server.Options{}); err == nil || !strings.Contains(err.Error(), "ops_key_env") {
		t.Fatalf("public ops_listen without a key: %v", err)
	}
	t.Setenv("SERVER_TEST_OPS_KEY", "")
	cfg = newConfig(t, db, llm.srv.URL, "ops_listen: 0.0.0.0:0\nops_key_env: SERVER_TEST_OPS_KEY\n")
	if _, err := server.New(context.Background(), cfg, server.Options{}); err == nil || !strings.Contains(err.Error(), "SERVER_TEST_OPS_KEY is empty") {
		t.Fatalf("empty operator key variable: %v", err)
	}
	t.Setenv("SERVER_TEST_OPS_KEY", operatorKey)
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ops := httptest.NewServer(srv.OpsHandler)
	defer ops.Close()
	for _, path := range []string{"/dashboard", "/metrics", "/v1/providers", "/v1/conformance"} {
		if status, _ := get(t, ops.URL+path, ""); status != http.StatusUnauthorized {
			t.Errorf("%s without the key: %d", path, status)
		}
		if status, _ := get(t, ops.URL+path, tenantKey); status != http.StatusUnauthorized {
			t.Errorf("%s with a tenant key: %d", path, status)
		}
		if status, body := get(t, ops.URL+path, operatorKey); status != http.StatusOK {
			t.Errorf("%s with the operator key: %d %s", path, status, body)
		}
	}
}

// SPEC §17: on SIGTERM a caller waiting for a job is answered at once with the
// job as it stands (202 + Location) while its attempt is still in flight; the
// attempt then finishes within the drain budget and wins — the job does not
// become unknown — and Serve returns.
func TestShutdownAnswersWaitersAndLetsTheAttemptWin(t *testing.T) {
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	srv, err := server.New(context.Background(), newConfig(t, db, llm.srv.URL, "ops_listen: 127.0.0.1:0\n"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	type answer struct {
		status   int
		location string
		job      map[string]any
	}
	answered := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/v1/jobs",
			strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
		req.Header.Set("Authorization", "Bearer "+tenantKey)
		req.Header.Set("Idempotency-Key", "shutdown-1")
		req.Header.Set("Prefer", "wait=60")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{}
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		answered <- answer{resp.StatusCode, resp.Header.Get("Location"), m}
	}()
	<-llm.arrived // the attempt is in flight; the caller waits
	if h, err := db.Store.Leader(context.Background(), "maintenance"); err != nil || h != srv.Replica {
		t.Fatalf("maintenance leader before shutdown: %q %v, want this replica %q", h, err, srv.Replica)
	}
	sigterm()
	a := <-answered // answered while the provider still holds the attempt
	if a.status != http.StatusAccepted || a.location == "" || a.job["state"] == "succeeded" {
		t.Fatalf("waiting caller got %d %q %v, want 202 with Location and the job still running", a.status, a.location, a.job)
	}
	// The draining replica gives up the maintenance lease while its attempt
	// is still held by the provider (recovery, which adopts what it hands
	// over, runs on the leader), not when the drain ends.
	for give := time.Now().Add(30 * time.Second); ; {
		h, err := db.Store.Leader(context.Background(), "maintenance")
		if err != nil {
			t.Fatal(err)
		}
		if h == "" {
			break
		}
		if time.Now().After(give) {
			t.Fatalf("the draining replica still holds the maintenance lease (%q) while its attempt is in flight", h)
		}
		time.Sleep(10 * time.Millisecond) // polling the database: the resignation has no other sign
	}
	close(llm.release)
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	id, _ := a.job["id"].(string)
	j, err := db.Store.GetJobAny(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s attempts %+v, want won by the attempt in flight at shutdown", j.State, j.Attempts)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Fatal("the tenant listener still accepts after shutdown")
	}
}
