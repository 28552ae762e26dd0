package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// docs/operations.md "Shutdown": requests still open when shutdown.http runs
// out are cut by the router — their contexts cancelled, their connections
// closed. docs/operations.md "Metrics" reserves status 499 for a request
// "whose caller left before anything was answered" (nginx's "client closed
// request"), logged at debug as "caller left". A request the router itself
// cut at shutdown is counted and logged exactly so: 499, the caller blamed,
// and nothing in router_http_requests_total shows that the replica dropped
// requests it had accepted. An operator reading a 5xx-rate alert or the
// access log after a rollout sees "clients hung up" where the router
// dropped them.
func TestRequestCutAtShutdownIsNotCountedAsCallerLeft(t *testing.T) {
	db := testdb.New(t, store.Options{})
	defer server.SetDBCloseWait(time.Hour)()
	llm := newFakeLLM(t)
	close(llm.release)
	srv, err := server.New(context.Background(), newConfig(t, db, llm.srv.URL, "shutdown: {http: 1s, drain: 2s}"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed, closing := make(chan struct{}), false
	defer func() {
		if !closing {
			srv.Close()
			return
		}
		<-closed
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, ln, opsLn) }()

	req, _ := http.NewRequest(http.MethodPost, base+"/v1/jobs",
		strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
	req.Header.Set("Authorization", "Bearer "+tenantKey)
	req.Header.Set("Idempotency-Key", "rops7-cut-status")
	req.Header.Set("Prefer", "wait=10")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if err != nil || job.ID == "" {
		t.Fatalf("POST /v1/jobs: %d, id %q (%v)", resp.StatusCode, job.ID, err)
	}

	tx, err := db.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	var holder int
	if err := tx.QueryRow(context.Background(), `SELECT pg_backend_pid() FROM jobs WHERE id = $1 FOR UPDATE`, job.ID).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	// The caller stays: it waits for its answer as long as the test runs.
	callerErr := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/jobs/"+job.ID+"/cancel", nil)
		req.Header.Set("Authorization", "Bearer "+tenantKey)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		callerErr <- err
	}()
	for {
		var blocked int
		if err := db.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, holder).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling PostgreSQL, the only place the wait shows
	}

	sigterm()
	if err := <-served; err != nil {
		t.Fatalf("ServeListeners: %v", err)
	}
	if err := <-callerErr; err == nil {
		t.Fatal("the cancel was answered; the test needs it cut by shutdown.http")
	}
	// The caller never left: the router cut its request.
	mreq := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	mreq.Host = "127.0.0.1"
	rec := httptest.NewRecorder()
	srv.OpsHandler.ServeHTTP(rec, mreq)
	var lines []string
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(l, "router_http_requests_total{") && strings.Contains(l, "cancel") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `status="503"`) {
		t.Errorf("a request the router cut at shutdown (shutdown.http ran out; its caller was still waiting) is counted as %v; want one series, 503 (the router's doing), not 499 \"client closed request\"", lines)
	}
	tx.Rollback(context.Background()) //nolint:errcheck
	closing = true
	go func() { defer close(closed); srv.Close() }()
}
