package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// tenantAPI is the tenant API wired as New wires it (readTenantBodies), with
// API keys checked against the configuration and the database, on a loopback
// listener; lines gets its log, one record a line.
type tenantAPI struct {
	addr  string
	lines lineWriter
	m     *metrics.Metrics
}

const goodKey = "good-key"

func serveTenantAPI(t *testing.T, c config.HTTP) *tenantAPI {
	t.Helper()
	db := testdb.New(t, store.Options{})
	a := &tenantAPI{lines: make(lineWriter, 16), m: metrics.New(metrics.Options{NoProcessCollectors: true})}
	srv := api.New(api.Config{MaxBodyBytes: c.MaxBodyBytes}, api.Deps{Store: db.Store,
		Auth: api.NewCachedAuth(&api.KeyAuth{Static: map[string]string{goodKey: "acme"}, Store: db.Store}, time.Minute),
		Log:  slog.New(slog.NewTextHandler(a.lines, nil)), Counters: a.m})
	readTenantBodies(srv, c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(srv, c)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	a.addr = ln.Addr().String()
	return a
}

// stalledBody is a request whose body never finishes: its headers, then the
// first bytes of its body, and nothing more on conn until the test says so.
type stalledBody struct {
	method, path, auth string
	chunked            bool
	length             int // declared Content-Length when not chunked
}

func (b stalledBody) send(t *testing.T, conn net.Conn, requestID string) {
	t.Helper()
	var h strings.Builder
	fmt.Fprintf(&h, "%s %s HTTP/1.1\r\nHost: x\r\nX-Request-Id: %s\r\nContent-Type: application/json\r\n", b.method, b.path, requestID)
	if b.auth != "" {
		fmt.Fprintf(&h, "Authorization: Bearer %s\r\n", b.auth)
	}
	if b.chunked {
		h.WriteString("Transfer-Encoding: chunked\r\n\r\n40\r\n{\"prompt\":") // a 64-byte chunk, 10 bytes of it sent
	} else {
		fmt.Fprintf(&h, "Content-Length: %d\r\n\r\n{\"prompt\":", b.length)
	}
	if _, err := io.WriteString(conn, h.String()); err != nil {
		t.Fatal(err)
	}
}

// bodies are the ways a body can stall: a declared length net/http gives up
// reading after an answer (over 256 KiB), one it would read to the end before
// answering (under 256 KiB), and a chunked body, whose length nobody knows.
var bodies = []struct {
	name    string
	chunked bool
	length  int
}{
	{"declared 10 MiB", false, 10 << 20},
	{"declared 100 bytes", false, 100},
	{"chunked", true, 0},
}

// A request without a valid API key is answered at once, with the body it is
// still sending never read: the read timeout is an hour, and the rest of the
// body is never sent, so the answer cannot come from the body's deadline (the
// connection's deadline, 30 s, only guards against a hang). The answer is the
// usual one — its request id, its access-log line, its metrics label — and
// closes the connection, which the server lets go without waiting an hour
// for the body either. Unknown paths and methods keep their 404 and 405.
func TestUnauthenticatedBodyIsNotRead(t *testing.T) {
	a := serveTenantAPI(t, config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second),
		ReadBodyTimeout: config.Duration(time.Hour), MaxBodyBytes: 1 << 20})
	type want struct {
		status   int
		kind     string // the problem type's last segment, or the OpenAI error code
		endpoint string // router_http_requests_total's endpoint label
	}
	cases := []struct {
		name         string
		method, path string
		auth         string
		want         want
	}{
		{"missing key", "POST", "/v1/jobs", "", want{401, "unauthenticated", "POST /v1/jobs"}},
		{"unknown key", "POST", "/v1/jobs", "wrong-key", want{401, "unauthenticated", "POST /v1/jobs"}},
		{"unknown key on chat", "POST", "/v1/chat/completions", "wrong-key", want{401, "invalid_api_key", "POST /v1/chat/completions"}},
		{"no endpoint", "POST", "/v1/nope", "wrong-key", want{404, "not-found", "/"}},
		{"wrong method", "PUT", "/v1/jobs", "", want{405, "method-not-allowed", "/"}},
	}
	n := 0
	for _, tc := range cases {
		for _, b := range bodies {
			t.Run(tc.name+", "+b.name, func(t *testing.T) {
				n++
				rid := fmt.Sprintf("unauth-%d", n)
				before := httpRequestCount(t, a.m, tc.method, tc.want.endpoint, fmt.Sprint(tc.want.status))
				conn := dial(t, a.addr)
				stalledBody{method: tc.method, path: tc.path, auth: tc.auth, chunked: b.chunked, length: b.length}.send(t, conn, rid)
				br := bufio.NewReader(conn)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("no answer while the body was still being sent: %v", err)
				}
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.want.status || answerKind(raw) != tc.want.kind {
					t.Fatalf("status %d %s, want %d %s", resp.StatusCode, raw, tc.want.status, tc.want.kind)
				}
				if got := resp.Header.Get(api.RequestIDHeader); got != rid {
					t.Errorf("X-Request-Id %q, want %q", got, rid)
				}
				if !api.OpenAIShaped(tc.path) {
					var p map[string]any
					if err := json.Unmarshal(raw, &p); err != nil || p["request_id"] != rid {
						t.Errorf("problem %s: want request_id %q", raw, rid)
					}
				}
				if !resp.Close {
					t.Errorf("answer without Connection: close: the connection would wait for the rest of the body")
				}
				// The server closes its end without the rest of the body.
				if _, err := io.ReadAll(br); errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("the server kept the connection open for the unsent body")
				}
				select {
				case l := <-a.lines:
					if !strings.Contains(l, fmt.Sprintf("status=%d", tc.want.status)) || !strings.Contains(l, "request_id="+rid) {
						t.Fatalf("log line %q, want the access line of the %d with request id %s", l, tc.want.status, rid)
					}
				case <-time.After(30 * time.Second): // a guard against a hang
					t.Fatal("no access-log line")
				}
				if got := httpRequestCount(t, a.m, tc.method, tc.want.endpoint, fmt.Sprint(tc.want.status)); got != before+1 {
					t.Fatalf("router_http_requests_total{%s, %s, %d} went from %v to %v, want one more", tc.method, tc.want.endpoint, tc.want.status, before, got)
				}
			})
		}
	}
}

// A request with a valid API key still has its body read within
// http.read_body_timeout before its endpoint runs: the same stalled bodies are
// a 408, with the request id, an access-log line that now names the owner
// (the key was checked first), and the endpoint's metrics label. The limit
// on bodies is above every declared length here: a Content-Length over it is
// a 413 before any of the body is read (TestDeclaredOversizedBodyIsRefusedUnread).
func TestAuthenticatedSlowBodyIs408(t *testing.T) {
	a := serveTenantAPI(t, config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second),
		ReadBodyTimeout: config.Duration(100 * time.Millisecond), MaxBodyBytes: 16 << 20})
	n := 0
	for _, path := range []string{"/v1/jobs", "/v1/chat/completions"} {
		for _, b := range bodies {
			t.Run(path+", "+b.name, func(t *testing.T) {
				n++
				rid := fmt.Sprintf("auth-%d", n)
				conn := dial(t, a.addr)
				stalledBody{method: "POST", path: path, auth: goodKey, chunked: b.chunked, length: b.length}.send(t, conn, rid)
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				want := "request-body-timeout"
				if api.OpenAIShaped(path) {
					want = "request_timeout"
				}
				if resp.StatusCode != http.StatusRequestTimeout || answerKind(raw) != want || resp.Header.Get(api.RequestIDHeader) != rid {
					t.Fatalf("status %d, X-Request-Id %q, %s; want 408 %s with request id %s", resp.StatusCode, resp.Header.Get(api.RequestIDHeader), raw, want, rid)
				}
				select {
				case l := <-a.lines:
					if !strings.Contains(l, "status=408") || !strings.Contains(l, "request_id="+rid) || !strings.Contains(l, "owner=acme") {
						t.Fatalf("log line %q, want the access line of the 408 with request id %s and owner acme", l, rid)
					}
				case <-time.After(30 * time.Second): // a guard against a hang
					t.Fatal("no access-log line for the 408")
				}
			})
		}
	}
	if got := httpRequestCount(t, a.m, "POST", "POST /v1/jobs", "408"); got != float64(len(bodies)) {
		t.Fatalf("router_http_requests_total{POST, POST /v1/jobs, 408} = %v, want %d", got, len(bodies))
	}
}

// answerKind is a problem's type (its last path segment) or an OpenAI
// error's code.
func answerKind(raw []byte) string {
	var a struct {
		Type  string `json:"type"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &a)
	if a.Error.Code != "" {
		return a.Error.Code
	}
	return a.Type[strings.LastIndex(a.Type, "/")+1:]
}
