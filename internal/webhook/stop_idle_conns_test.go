package webhook_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Stop closes the delivery client's idle connections: they used to stay open,
// each with its two goroutines, for net/http's idle timeout (90 s) after the
// service stopped — up to webhooks.workers of them per endpoint. The
// endpoint's server sees its connection closed; it sees nothing for those
// 90 s when Stop leaves them.
func TestStopClosesTheDeliveryConnections(t *testing.T) {
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	allClosed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
			if len(open) == 0 {
				select {
				case allClosed <- struct{}{}:
				default:
				}
			}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	e := setup(t, srv.URL, 5*time.Second)
	e.start(t)
	j := e.cancel(t, "acme", "k1")
	e.waitStatus(t, "acme", j.ID, store.EventDelivered, 1)
	mu.Lock()
	conns := len(open)
	mu.Unlock()
	if conns == 0 {
		t.Fatal("the endpoint has no connection open after the delivery: nothing to test")
	}
	// The delivery's connection is idle now: net/http puts a connection back
	// in its pool before it hands over an answer without a body.
	select {
	case <-allClosed: // the stale signal of a closed connection before the delivery's
	default:
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.svc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-allClosed:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("30s after Stop, the endpoint still has %d of the delivery client's connections open", len(open))
	}
}
