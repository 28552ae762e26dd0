package api_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// A streaming caller that stops reading without closing its connection does
// not hold the handler in a write: once a write has waited
// Config.StreamWriteStall for the caller to take it, the stream ends. The
// answer (several MiB of events) is far more than the connection's buffers
// hold, so without the bound the handler would wait in a write for as long as
// the connection lasts.
func TestStreamToACallerThatStoppedReadingEnds(t *testing.T) {
	answer := strings.Repeat("all work and no play makes a stream stall ", 4<<20/42) // 4 MiB of content
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: answer}
	}})
	// The bundle's router with a short stall, behind a hook that says when
	// its handler returns, on connections that say when a write ran into
	// its deadline.
	stalled := api.New(api.Config{LeaseOwner: "test", Lease: 30 * time.Second, StreamWriteStall: 50 * time.Millisecond},
		api.Deps{Store: b.db.Store, Listener: b.listener, Prompts: b.prompts, Routes: map[string]bool{"default": true},
			Exec: b.runner, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}, Store: b.db.Store}})
	returned := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		stalled.ServeHTTP(w, r)
	}))
	timedOut := &atomic.Bool{}
	srv.Listener = stallListener{Listener: srv.Listener, timedOut: timedOut}
	srv.Start()
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() // before srv.Close, which waits for the handler
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"default","stream":true,"messages":[{"role":"user","content":"tell me everything"}]}`
	if _, err := fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: router\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", acmeKey, len(body), body); err != nil {
		t.Fatal(err)
	}
	// Nothing is read.
	select {
	case <-returned:
	case <-time.After(2 * time.Minute):
		t.Fatal("the handler streaming to a caller that stopped reading never returned: it waits in a write")
	}
	if !timedOut.Load() {
		t.Fatal("the handler returned, but no write ran into its deadline: the caller did not stall the stream")
	}
}

// stallListener's connections note when a write runs into its deadline.
type stallListener struct {
	net.Listener
	timedOut *atomic.Bool
}

func (l stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return stallConn{Conn: c, timedOut: l.timedOut}, nil
}

type stallConn struct {
	net.Conn
	timedOut *atomic.Bool
}

func (c stallConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.timedOut.Store(true)
	}
	return n, err
}
