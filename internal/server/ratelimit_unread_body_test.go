package server

import (
	"bufio"
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
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An owner already past its requests_per_second (SPEC §17) is answered 429
// with Retry-After as soon as its key is checked, with the body it is still
// sending never read: the body's timeout is an hour and the rest of the body
// is never sent, so the answer can be neither a 408 nor one given after the
// body (the connection's deadline, 30 s, only guards against a hang). The
// answer is in the endpoint's shape (OpenAI's on chat), names the owner in
// the access log, and closes the connection, which the server lets go without
// the rest of the body. Found by review: the body was read first, and a
// stalled one got 408 "send the whole body promptly".
func TestRateLimitedOwnerIsRefusedBeforeItsBodyIsRead(t *testing.T) {
	db := testdb.New(t, store.Options{})
	c := config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second),
		ReadBodyTimeout: config.Duration(time.Hour), MaxBodyBytes: 1 << 20}
	lines := make(lineWriter, 64)
	srv := api.New(api.Config{MaxBodyBytes: c.MaxBodyBytes, Limits: api.Limits{RequestsPerSecond: 0.001, Burst: 1}},
		api.Deps{Store: db.Store, Auth: &api.KeyAuth{Static: map[string]string{goodKey: "acme"}},
			Log: slog.New(slog.NewTextHandler(lines, nil))})
	readTenantBodies(srv, c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(srv, c)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	addr := ln.Addr().String()

	// The owner's one token (the next comes in 1000 s).
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/jobs", nil)
	req.Header.Set("Authorization", "Bearer "+goodKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the request within the burst: %d", resp.StatusCode)
	}

	n := 0
	for _, path := range []string{"/v1/jobs", "/v1/chat/completions"} {
		for _, b := range bodies {
			t.Run(path+", "+b.name, func(t *testing.T) {
				n++
				rid := fmt.Sprintf("rate-%d", n)
				conn := dial(t, addr)
				stalledBody{method: "POST", path: path, auth: goodKey, chunked: b.chunked, length: b.length}.send(t, conn, rid)
				br := bufio.NewReader(conn)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("no answer while the body was still being sent: %v", err)
				}
				raw, _ := io.ReadAll(resp.Body)
				want := "rate-limited"
				if api.OpenAIShaped(path) {
					want = "rate_limit_exceeded"
				}
				if resp.StatusCode != http.StatusTooManyRequests || answerKind(raw) != want {
					t.Fatalf("owner past its rate: %d %s, want 429 %s", resp.StatusCode, strings.TrimSpace(string(raw)), want)
				}
				if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(raw), "requests per second") {
					t.Errorf("Retry-After %q, %s: want the wait and the limit named", resp.Header.Get("Retry-After"), raw)
				}
				if !resp.Close {
					t.Errorf("answer without Connection: close: the connection would wait for the rest of the body")
				}
				if _, err := io.ReadAll(br); errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("the server kept the connection open for the unsent body")
				}
				for {
					select {
					case l := <-lines:
						if !strings.Contains(l, "request_id="+rid) {
							continue
						}
						if !strings.Contains(l, "status=429") || !strings.Contains(l, "owner=acme") {
							t.Fatalf("log line %q, want the access line of the 429 with owner acme", l)
						}
					case <-time.After(30 * time.Second): // a guard against a hang
						t.Fatal("no access-log line for the 429")
					}
					break
				}
			})
		}
	}
}
