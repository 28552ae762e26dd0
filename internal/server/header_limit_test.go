package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
)

// countingAuth knows no key and counts the lookups that reached it.
type countingAuth struct{ calls atomic.Int64 }

func (a *countingAuth) Owner(context.Context, string) (string, bool, error) {
	a.calls.Add(1)
	return "", false, nil
}

// serveTenantNoDB is the tenant API wired as New wires it (readTenantBodies,
// newHTTPServer), with auth as its Authenticator and no database.
func serveTenantNoDB(t *testing.T, c config.HTTP, auth api.Authenticator) string {
	t.Helper()
	srv := api.New(api.Config{}, api.Deps{Auth: auth})
	readTenantBodies(srv, c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(srv, c)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// rawRequest sends head (a request line and headers, without the blank line
// ending them) on a new connection and reads the answer.
func rawRequest(t *testing.T, addr, head string) (*http.Response, []byte) {
	t.Helper()
	conn := dial(t, addr)
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// A 900 KiB Authorization header (under net/http's own limit) is answered
// 431 in the endpoint's error shape, before the key is looked up.
func TestTenantHugeAuthorizationHeaderIs431(t *testing.T) {
	c := config.Config{}.WithDefaults().HTTP
	auth := &countingAuth{}
	addr := serveTenantNoDB(t, c, auth)
	huge := strings.Repeat("a", 900<<10)

	resp, body := rawRequest(t, addr, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+huge+"\r\n")
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d %s %.300s; want 431 application/problem+json", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var p struct{ Type, Detail string }
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.Type, "/headers-too-large") || !strings.Contains(p.Detail, "the limit is http.max_header_bytes = 65536") {
		t.Fatalf("problem %+v", p)
	}
	if resp.Header.Get(api.RequestIDHeader) == "" {
		t.Fatal("the 431 has no X-Request-Id: it was answered outside the API")
	}

	resp, body = rawRequest(t, addr, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+huge+"\r\n")
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || e.Error.Code != "headers_too_large" || !strings.Contains(e.Error.Message, "http.max_header_bytes") {
		t.Fatalf("chat: status %d %.300s; want 431 in OpenAI's shape, code headers_too_large", resp.StatusCode, body)
	}
	if n := auth.calls.Load(); n != 0 {
		t.Fatalf("the key was looked up %d times for oversized headers", n)
	}
}

// The limit counts the request line, Host, every "Name: value\r\n" and the
// blank line: headers of exactly http.max_header_bytes reach authentication,
// one byte more is 431.
func TestTenantHeadersAtLimitPass(t *testing.T) {
	const limit = 4096
	c := config.Config{HTTP: config.HTTP{MaxHeaderBytes: limit}}.WithDefaults().HTTP
	auth := &countingAuth{}
	addr := serveTenantNoDB(t, c, auth)
	head := func(size int) string {
		h := "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer unknown\r\nX-Pad: "
		return h + strings.Repeat("p", size-len(h)-len("\r\n\r\n")) + "\r\n"
	}
	if got := len(head(limit) + "\r\n"); got != limit {
		t.Fatalf("test request is %d bytes, want %d", got, limit)
	}
	resp, body := rawRequest(t, addr, head(limit))
	if resp.StatusCode != http.StatusUnauthorized || auth.calls.Load() != 1 {
		t.Fatalf("headers of exactly the limit: status %d %s, %d lookups; want 401 after one lookup", resp.StatusCode, body, auth.calls.Load())
	}
	resp, body = rawRequest(t, addr, head(limit+1))
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !strings.Contains(string(body), fmt.Sprintf("request headers are %d bytes; the limit is http.max_header_bytes = %d", limit+1, limit)) {
		t.Fatalf("one byte over: status %d %s; want 431", resp.StatusCode, body)
	}
	if auth.calls.Load() != 1 {
		t.Fatal("the key was looked up for headers over the limit")
	}
}

// net/http's own limit is above the router's, so its text/plain 431 is
// reserved for headers past what it read before the limit existed.
func TestHTTPServerMaxHeaderBytesAboveLimit(t *testing.T) {
	for _, limit := range []int64{0, 1 << 10, 64 << 10, config.MaxHeaderBytesCap} {
		got := newHTTPServer(http.NotFoundHandler(), config.HTTP{MaxHeaderBytes: limit}).MaxHeaderBytes
		if int64(got) <= max(headerLimit(limit), 1<<20) {
			t.Errorf("max_header_bytes %d: net/http's MaxHeaderBytes %d is not above it and 1 MiB", limit, got)
		}
	}
}
