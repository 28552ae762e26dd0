package providers

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// keepsOneConnection makes five streamed calls, through the adapter built on
// the URL of a server answering with h, and fails unless they shared one
// connection: a stream's body closed before its end closes an HTTP/1.1
// connection instead of returning it to the pool.
func keepsOneConnection(t *testing.T, h http.HandlerFunc, adapter func(url string) Streamer) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p := adapter(srv.URL)
	for range 5 {
		if _, err := p.CompleteStream(context.Background(), testRequest(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("5 streamed calls opened %d connections, want 1 (the stream's body closed before its end)", n)
	}
}
