package api_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// A caller that asks for a large non-streamed answer (a page of GET /v1/jobs)
// and stops reading without closing its connection does not hold the handler,
// and the page it is writing, for as long as the connection lasts: once a
// write has waited Config.StreamWriteStall for the caller to take it, the
// answer ends. The page (over 4 MiB) is far more than the connection's
// buffers, made small at both ends, hold.
func TestNonStreamedAnswerToACallerThatStoppedReadingEnds(t *testing.T) {
	b := setup(t, options{})
	createLargeJobs(t, b, 6, 900<<10)
	stalled := api.New(api.Config{LeaseOwner: "test", Lease: 30 * time.Second, StreamWriteStall: 50 * time.Millisecond},
		api.Deps{Store: b.db.Store, Listener: b.listener, Prompts: b.prompts, Routes: map[string]bool{"default": true},
			Exec: b.runner, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}, Store: b.db.Store}})
	returned := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		stalled.ServeHTTP(w, r)
	}))
	timedOut := &atomic.Bool{}
	srv.Listener = stallListener{Listener: smallSendListener{srv.Listener}, timedOut: timedOut}
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
	if _, err := fmt.Fprintf(conn, "GET /v1/jobs?limit=200 HTTP/1.1\r\nHost: router\r\nAuthorization: Bearer %s\r\n\r\n", acmeKey); err != nil {
		t.Fatal(err)
	}
	// Nothing is read.
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("the handler answering a caller that stopped reading never returned: it waits in a write")
	}
	if !timedOut.Load() {
		t.Fatal("the handler returned, but no write ran into its deadline: the caller did not stall the answer")
	}
}

// smallSendListener's connections have a small send buffer, so that a
// caller that does not read stalls the server's writes early.
type smallSendListener struct{ net.Listener }

func (l smallSendListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, nil
}
