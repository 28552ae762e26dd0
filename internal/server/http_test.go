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
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
)

// serveHTTP runs newHTTPServer(h, c) on a loopback listener until the test ends.
func serveHTTP(t *testing.T, h http.Handler, c config.HTTP) (addr string, srv *http.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv = newHTTPServer(withBodyRead(c)(h), c)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), srv
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A guard against a hanging test, not a timing assertion.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	return conn
}

func TestHTTPServerTimeoutsFromConfig(t *testing.T) {
	c := config.Config{}.WithDefaults().HTTP
	srv := newHTTPServer(http.NotFoundHandler(), c)
	if srv.ReadHeaderTimeout != 10*time.Second || srv.IdleTimeout != 120*time.Second {
		t.Fatalf("ReadHeaderTimeout %s, IdleTimeout %s; want the defaults 10s and 120s", srv.ReadHeaderTimeout, srv.IdleTimeout)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Fatalf("ReadTimeout %s, WriteTimeout %s: either would cut long-polls and streams", srv.ReadTimeout, srv.WriteTimeout)
	}
	if c.ReadBodyTimeout.D() != 30*time.Second {
		t.Fatalf("read_body_timeout default %s, want 30s", c.ReadBodyTimeout.D())
	}
}

// A client that sends headers and then only part of its body gets a 408 and
// the connection is closed; the handler never sees the request.
func TestHTTPServerSlowBodyIs408(t *testing.T) {
	called := make(chan struct{}, 1)
	addr, _ := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called <- struct{}{} }),
		config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second), ReadBodyTimeout: config.Duration(100 * time.Millisecond), MaxBodyBytes: 1 << 20})
	conn := dial(t, addr)
	fmt.Fprintf(conn, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\":")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "read_body_timeout") {
		t.Fatalf("status %d %s, want 408 naming http.read_body_timeout", resp.StatusCode, body)
	}
	select {
	case <-called:
		t.Fatal("the handler ran for a body that never arrived")
	default:
	}
}

// Headers that never finish: the server closes the connection.
func TestHTTPServerSlowHeadersClosed(t *testing.T) {
	addr, _ := serveHTTP(t, http.NotFoundHandler(),
		config.HTTP{ReadHeaderTimeout: config.Duration(100 * time.Millisecond), MaxBodyBytes: 1 << 20})
	conn := dial(t, addr)
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	b, err := io.ReadAll(conn) // returns when the server closes the connection
	if err != nil {
		t.Fatalf("read: %v (the server kept the connection open)", err)
	}
	if len(b) > 0 && !strings.Contains(string(b), "408") {
		t.Fatalf("unexpected answer to incomplete headers: %q", b)
	}
}

// The body deadline ends with the body: a handler that holds the request
// (a long-poll) well past it keeps a live context and answers, for a POST with
// a body and a GET without one. The handler waits three body timeouts: that
// is the property under test, not synchronisation.
func TestHTTPServerBodyTimeoutDoesNotCutLongPolls(t *testing.T) {
	const timeout = 50 * time.Millisecond
	addr, _ := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		select {
		case <-time.After(3 * timeout):
		case <-r.Context().Done():
			http.Error(w, "context cut: "+context.Cause(r.Context()).Error(), 500)
			return
		}
		fmt.Fprintf(w, "held %d", len(body))
	}), config.HTTP{ReadHeaderTimeout: config.Duration(time.Second), ReadBodyTimeout: config.Duration(timeout), MaxBodyBytes: 1 << 20})
	for _, method := range []string{"POST", "GET"} {
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(`{"a":1}`)
		}
		req, _ := http.NewRequest(method, "http://"+addr+"/v1/jobs/x", body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s held past the body timeout: %d %s", method, resp.StatusCode, b)
		}
	}
}

// An oversized body is passed on as max+1 bytes so the handler's own limit
// answers 413 in the endpoint's format.
func TestHTTPServerOversizedBodyReachesHandlerLimit(t *testing.T) {
	addr, _ := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 10))
		if err != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(200)
	}), config.HTTP{ReadHeaderTimeout: config.Duration(time.Second), ReadBodyTimeout: config.Duration(time.Second), MaxBodyBytes: 10})
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(strings.Repeat("x", 1000)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
}

// On the OpenAI-compatible endpoint a body that never arrives is answered in
// OpenAI's error shape, which SDKs read (docs/chat.md), not as a problem.
func TestHTTPServerSlowChatBodyIs408InOpenAIShape(t *testing.T) {
	addr, _ := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second), ReadBodyTimeout: config.Duration(100 * time.Millisecond), MaxBodyBytes: 1 << 20})
	conn := dial(t, addr)
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != http.StatusRequestTimeout ||
		body.Error.Code != "request_timeout" || !strings.Contains(body.Error.Message, "read_body_timeout") {
		t.Fatalf("status %d %s, want 408 in OpenAI's error shape", resp.StatusCode, raw)
	}
}
