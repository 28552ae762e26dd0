package webhook_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// Deliveries to one endpoint keep their connections: a wave of as many
// events as the replica has workers, all in flight at once, then a second
// such wave, open no connection beyond the first wave's. With net/http's
// default of 2 idle connections per host, the second wave opened workers-2
// new ones (a TCP and, for https, a TLS handshake per delivery).
func TestDeliveriesToOneEndpointReuseConnections(t *testing.T) {
	const workers = 8
	var newConns atomic.Int64
	var mu sync.Mutex
	gate, arrived := make(chan struct{}), 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		// Hold each request until the whole wave is in flight, so that the
		// wave needs a connection per worker.
		mu.Lock()
		g := gate
		if arrived++; arrived == workers {
			close(gate)
			gate, arrived = make(chan struct{}), 0
		}
		mu.Unlock()
		select {
		case <-g:
			w.WriteHeader(http.StatusNoContent) // no body: the connection is idle again when the answer is read
		case <-r.Context().Done():
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	e := setup(t, srv.URL, time.Minute) // no try times out while a wave waits
	svc, err := webhook.NewService(e.db.Pool, e.st, webhook.ServiceConfig{
		Config:              webhook.Config{Timeout: time.Minute, Secrets: map[string]string{"acme": secret}},
		MaxWorkers:          workers,
		MaxInflightPerOwner: workers, // one owner's wave takes every worker
		PollInterval:        100 * time.Millisecond,
		Log:                 slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start(t)

	wave := func(name string) int64 {
		before := newConns.Load()
		jobs := make([]*store.Job, workers)
		for i := range jobs {
			jobs[i] = e.cancel(t, "acme", fmt.Sprintf("%s-%d", name, i))
		}
		for _, j := range jobs {
			e.waitStatus(t, "acme", j.ID, store.EventDelivered, 1)
		}
		return newConns.Load() - before
	}
	first := wave("first")
	second := wave("second")
	if first+second > workers {
		t.Fatalf("%d workers opened %d connections in the first wave and %d more in the second, want at most %d in all",
			workers, first, second, workers)
	}
}
