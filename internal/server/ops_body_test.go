package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/ops"
)

// bodyWatch is a listener whose connections signal waitedForBody when the
// server reads on after a request's headers have arrived and before it has
// written anything: it is waiting for the body of a request it has not
// answered.
type bodyWatch struct {
	net.Listener
	waitedForBody chan struct{}
	once          sync.Once
}

func (l *bodyWatch) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &bodyWatchConn{Conn: c, l: l}, nil
}

type bodyWatchConn struct {
	net.Conn
	l        *bodyWatch
	mu       sync.Mutex
	got      []byte // what the server has read, until it answers
	answered bool
}

func (c *bodyWatchConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if !c.answered && bytes.Contains(c.got, []byte("\r\n\r\n")) {
		c.l.once.Do(func() { close(c.l.waitedForBody) })
	}
	c.mu.Unlock()
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	if !c.answered {
		c.got = append(c.got, p[:n]...)
	}
	c.mu.Unlock()
	return n, err
}

func (c *bodyWatchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.answered = true
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// serveOps serves h on the operator listener as ServeListeners builds it
// (newOpsServer), with a body timeout of an hour: an answer that waited for
// the body could not come from its deadline.
func serveOps(t *testing.T, h http.Handler) (addr string, w *bodyWatch) {
	t.Helper()
	c := config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second), ReadBodyTimeout: config.Duration(time.Hour), MaxBodyBytes: 1 << 20}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w = &bodyWatch{Listener: ln, waitedForBody: make(chan struct{})}
	srv := newOpsServer(h, c)
	go func() { _ = srv.Serve(w) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), w
}

// A request the operator listener refuses — without the operator key, with a
// body (no operator endpoint takes one), or, on a listener without a key,
// addressed to a foreign Host — is answered without its body being read: the
// body never arrives, and the answer comes before the server reads past the
// headers. The answer closes the connection, and the server closes its end
// without the body.
func TestOpsRefusesWithoutReadingTheBody(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "router_up 1\n") })
	keyed := ops.New(ops.Config{Key: "the-operator-key", Metrics: metrics}, nil, nil, nil)
	keyless := ops.New(ops.Config{Metrics: metrics}, nil, nil, nil)
	cases := []struct {
		name   string
		ops    http.Handler
		auth   string
		status int
	}{
		{"wrong operator key", keyed, "wrong", http.StatusUnauthorized},
		{"no operator key", keyed, "", http.StatusUnauthorized},
		{"a body with the operator key", keyed, "the-operator-key", http.StatusRequestEntityTooLarge},
		{"a foreign Host without an operator key", keyless, "", http.StatusMisdirectedRequest},
	}
	for _, tc := range cases {
		for _, b := range bodies {
			t.Run(tc.name+", "+b.name, func(t *testing.T) {
				addr, watch := serveOps(t, tc.ops)
				conn := dial(t, addr) // Host: x
				stalledBody{method: "GET", path: "/metrics", auth: tc.auth, chunked: b.chunked, length: b.length}.send(t, conn, "r")
				type answer struct {
					resp *http.Response
					raw  []byte
					err  error
				}
				answered := make(chan answer, 1)
				br := bufio.NewReader(conn)
				go func() {
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						answered <- answer{err: err}
						return
					}
					raw, _ := io.ReadAll(resp.Body)
					answered <- answer{resp: resp, raw: raw}
				}()
				var a answer
				select {
				case <-watch.waitedForBody:
					t.Fatal("the operator listener reads on for the body of a request it refuses, before answering it")
				case a = <-answered:
				}
				if a.err != nil {
					t.Fatalf("no answer while the body was still being sent: %v", a.err)
				}
				if a.resp.StatusCode != tc.status || bytes.Contains(a.raw, []byte("router_up")) {
					t.Fatalf("status %d %s, want %d", a.resp.StatusCode, a.raw, tc.status)
				}
				if !a.resp.Close {
					t.Errorf("answer without Connection: close: the connection would wait for the rest of the body")
				}
				if _, err := io.ReadAll(br); errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("the server kept the connection open for the unsent body")
				}
			})
		}
	}
	// The operator's own requests, without a body, are served.
	for _, c := range []struct {
		ops        http.Handler
		host, auth string
	}{{keyed, "x", "the-operator-key"}, {keyless, "127.0.0.1", ""}} {
		addr, _ := serveOps(t, c.ops)
		conn := dial(t, addr)
		fmt.Fprintf(conn, "GET /metrics HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", c.host, c.auth)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte("router_up 1")) {
			t.Fatalf("Host %s: status %d %s, want the metrics", c.host, resp.StatusCode, raw)
		}
	}
}
