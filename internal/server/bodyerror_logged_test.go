package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/metrics"
)

// lineWriter sends each write (one log record) to lines.
type lineWriter chan string

func (l lineWriter) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

// A request whose body stalls is answered 408 inside the API's middleware:
// with an X-Request-Id, a request_id in the problem, and its access-log line,
// like any other answer (docs/api.md). (Found by following the docs: the
// body was read, and the 408 written, before the request id and the log.)
func TestSlowBodyAnswerHasRequestIDAndIsLogged(t *testing.T) {
	lines := make(lineWriter, 16)
	c := config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second), ReadBodyTimeout: config.Duration(100 * time.Millisecond), MaxBodyBytes: 1 << 20}
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	srv := api.New(api.Config{}, api.Deps{Log: slog.New(slog.NewTextHandler(lines, nil)), Counters: m})
	srv.WrapRoutes(withBodyRead(c))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(srv, c)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	conn := dial(t, ln.Addr().String())
	fmt.Fprintf(conn, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nX-Request-Id: slow-body-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\":")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d %s, want 408", resp.StatusCode, body)
	}
	if got := resp.Header.Get(api.RequestIDHeader); got != "slow-body-1" {
		t.Errorf("X-Request-Id %q, want the caller's slow-body-1", got)
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil || p["request_id"] != "slow-body-1" {
		t.Errorf("problem %s (%v): want request_id slow-body-1", body, err)
	}
	select {
	case l := <-lines:
		if !strings.Contains(l, "status=408") || !strings.Contains(l, "request_id=slow-body-1") {
			t.Fatalf("log line %q, want the access line of the 408 with its request id", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no access-log line for the 408")
	}
	// Counted under the endpoint it was sent to, though the mux never ran.
	if got := httpRequestCount(t, m, "POST", "POST /v1/jobs", "408"); got != 1 {
		t.Fatalf("router_http_requests_total{POST, POST /v1/jobs, 408} = %v, want 1", got)
	}
}

// httpRequestCount is router_http_requests_total{method, endpoint, status}.
func httpRequestCount(t *testing.T, m *metrics.Metrics, method, endpoint, status string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"method": method, "endpoint": endpoint, "status": status}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "router_http_requests_total" {
			continue
		}
	next:
		for _, s := range mf.GetMetric() {
			for _, lp := range s.GetLabel() {
				if lp.GetValue() != want[lp.GetName()] {
					continue next
				}
			}
			n += s.GetCounter().GetValue()
		}
	}
	return n
}
