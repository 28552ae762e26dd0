package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A second SIGTERM or Ctrl-C while `router serve` drains stops it at once:
// the attempt in flight is cut (recorded for what is known of it, its job
// handed over)
// instead of being waited for up to shutdown.drain, serve says so, and it
// still closes cleanly — it returns no error and its listener is closed.
func TestServeStopsAtOnceOnASecondSignal(t *testing.T) {
	db := testdb.New(t, store.Options{})
	keepGC(t)

	// The provider holds every request until the router gives it up.
	inFlight := make(chan struct{}, 1)
	release := make(chan struct{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case inFlight <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(provider.Close)
	t.Cleanup(func() { close(release) }) // before provider.Close, should serve still hold a request

	// Nothing ends the attempt by itself for an hour: not its timeout, not
	// the job's deadline, not the drain.
	cfg := serveConfig(t, db, "second-signal", "second-signal-key", fmt.Sprintf(`log: {level: warn}
providers:
  - {name: slow, type: openai, base_url: %q, model: m, stream: false, max_retries: 0, timeout: 1h}
routes:
  default: {providers: [slow], deadline: 1h, hedge_after: "off"}
shutdown: {drain: 1h}
`, provider.URL+"/v1"))
	ln, opsLn := listen(t), listen(t)
	base := "http://" + ln.Addr().String()

	const warning = "second signal: stopping now; attempts still in flight are cut (failed if the provider had begun answering, unknown if not) and their jobs handed over"
	_, stderr := captureOutput(t, func() {
		first, signalFirst := context.WithCancel(context.Background())
		second, signalSecond := context.WithCancel(context.Background())
		defer signalFirst()
		defer signalSecond()
		served := make(chan error, 1)
		go func() { served <- serve(withSecondSignal(first, second), cfg, ln, opsLn, nil) }()

		// A caller waits on a job whose attempt is in flight.
		answered := make(chan int, 1)
		go func() {
			resp, err := http.DefaultClient.Do(triageJobRequest(base, "second-signal-key", "second-signal-1", 600))
			if err != nil {
				t.Errorf("POST /v1/jobs: %v", err)
				answered <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
		select {
		case <-inFlight:
		case err := <-served:
			t.Fatalf("serve returned before the attempt was sent: %v", err)
		}

		signalFirst()
		// The drain has begun once the waiting caller is answered (at once).
		if code := <-answered; code != http.StatusAccepted {
			t.Fatalf("the waiting caller got %d at the first signal, want 202", code)
		}
		signalSecond()

		select {
		case err := <-served:
			if err != nil {
				t.Fatalf("serve after a second signal: %v; want nil (a clean stop)", err)
			}
		case <-time.After(2 * time.Minute): // only to fail rather than hang: the drain alone would last an hour
			t.Fatal("serve still draining two minutes after the second signal")
		}
	})
	if !strings.Contains(stderr, warning) {
		t.Errorf("serve's log lacks the warning %q:\n%s", warning, stderr)
	}
	if resp, err := http.Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("the tenant listener still answers after serve returned")
	}

	// Cut, and recorded at once for what is known of it: sent, no byte back,
	// so its outcome is unknown — kind shutdown, not left running for its
	// lease to expire as if the router had died.
	var state, kind string
	if err := db.Pool.QueryRow(context.Background(), `SELECT state, coalesce(error->>'kind', '') FROM attempts`).Scan(&state, &kind); err != nil ||
		state != "unknown" || kind != "shutdown" {
		t.Fatalf("the attempt in flight: state %q kind %q (%v); want unknown, kind shutdown", state, kind, err)
	}
}
