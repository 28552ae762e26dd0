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

// A request still open when shutdown.http runs out is cut: its context, and
// so the query it waits on, is cancelled and its database connection
// returned. It used to be left running: Shutdown returned, and Close then
// waited for ever in the pool's Close for the connection of a cancel waiting
// on a row another session held — a stop no second signal could end. Found by
// review. It is counted 503: the router ended it, not its caller.
func TestCloseReturnsWhenARequestWaitsOnAHeldRow(t *testing.T) {
	db := testdb.New(t, store.Options{})
	// Closing the database would give up on the connection after a while
	// (TestCloseDatabaseDoesNotWaitForEverForAConnectionInUse): not here,
	// where the request must be cut.
	defer server.SetDBCloseWait(time.Hour)()
	llm := newFakeLLM(t)
	close(llm.release) // the provider answers at once: the job succeeds
	srv, err := server.New(context.Background(), newConfig(t, db, llm.srv.URL, "shutdown: {http: 1s, drain: 2s}"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed, closing := make(chan struct{}), false
	defer func() { // last: after the held row is released
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
	req.Header.Set("Idempotency-Key", "held-row-cancel")
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

	// Another session holds the job's row until Close has returned.
	tx, err := db.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	var holder int
	if err := tx.QueryRow(context.Background(), `SELECT pg_backend_pid() FROM jobs WHERE id = $1 FOR UPDATE`, job.ID).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan struct{})
	go func() {
		defer close(cancelled)
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/jobs/"+job.ID+"/cancel", nil)
		req.Header.Set("Authorization", "Bearer "+tenantKey)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	// The cancel waits for the row once a session is blocked by the holder.
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
	closing = true
	go func() { defer close(closed); srv.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute): // only to fail rather than hang: Close waited for ever
		t.Fatal("Close has not returned a minute after the shutdown: it waits for the connection of a request still waiting on a held row")
	}
	<-cancelled
	// Its caller was still waiting: the router cut it, which is counted as
	// 503, not as 499 ("client closed request", the caller's doing). The
	// count is made as the cut handler returns, which nothing signals:
	// polled.
	var lines []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		mreq := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		mreq.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		srv.OpsHandler.ServeHTTP(rec, mreq)
		lines = lines[:0]
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			if strings.HasPrefix(l, "router_http_requests_total{") && strings.Contains(l, "cancel") {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `status="503"`) {
		t.Errorf("the cancel the router cut at shutdown is counted as %v; want one series, status 503, not 499 (client closed request)", lines)
	}
}
