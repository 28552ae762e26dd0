package server

import (
	"bufio"
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
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Requests whose bodies stall take their owner's rate token before their body
// is read (SPEC §17: the token bucket covers every authenticated tenant
// request): an owner limited to one request (burst 1, the next token in
// 1000 s) that opens 20 requests at once, each stalling its body, gets one of
// them let in — answered 408 when its body does not arrive within
// http.read_body_timeout — and the 19 others refused 429 at once, their bodies
// unread; the token the stalled one took is spent, so the owner's next request
// is refused too. Found by review: the token was taken only once the body had
// been read, so a body that stalled or failed took none, and all 20 were let
// in, each holding a connection, a goroutine and a body buffer for
// http.read_body_timeout, and the request after them got 200.
func TestStalledBodiesTakeTheirOwnersRateTokens(t *testing.T) {
	db := testdb.New(t, store.Options{})
	// The body timeout is what answers the one request let in (408); nothing
	// waits for it to pass.
	c := config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second),
		ReadBodyTimeout: config.Duration(500 * time.Millisecond), MaxBodyBytes: 1 << 20}
	srv := api.New(api.Config{MaxBodyBytes: c.MaxBodyBytes, Limits: api.Limits{RequestsPerSecond: 0.001, Burst: 1}},
		api.Deps{Store: db.Store, Auth: &api.KeyAuth{Static: map[string]string{goodKey: "acme"}},
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	readTenantBodies(srv, c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(srv, c)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	addr := ln.Addr().String()

	// Every request is sent (headers and the start of its body) before any
	// answer is read, so all are in the router at once.
	conns := make([]net.Conn, 20)
	for i := range conns {
		conns[i] = dial(t, addr)
		path := "/v1/jobs"
		if i%2 == 1 {
			path = "/v1/chat/completions"
		}
		stalledBody{method: "POST", path: path, auth: goodKey, chunked: i%4 >= 2, length: 100}.send(t, conns[i], fmt.Sprintf("stalled-%d", i))
	}
	statuses := make([]int, len(conns))
	letIn, limited := 0, 0
	for i, conn := range conns {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("request %d: no answer: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses[i] = resp.StatusCode
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			limited++
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("request %d: 429 without Retry-After", i)
			}
		case http.StatusRequestTimeout:
			letIn++
		}
	}
	if letIn != 1 || limited != len(conns)-1 {
		t.Fatalf("rate 0.001/s, burst 1: %d of %d requests with stalled bodies were let in (got 408), %d refused 429 (statuses %v); want 1 let in, the rest refused",
			letIn, len(conns), limited, statuses)
	}

	// The token the stalled request took is spent although its body never
	// came.
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/jobs", nil)
	req.Header.Set("Authorization", "Bearer "+goodKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(raw), "requests per second") {
		t.Fatalf("the request after the stalled ones: %d %s, want 429 naming the owner's rate (the stalled request's token is spent)",
			resp.StatusCode, raw)
	}
}
