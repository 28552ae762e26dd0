package webhook_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// connRequests counts the requests of one connection (the server's
// ConnContext gives each its own).
type connRequests struct{}

// The Idempotency-Key is what lets net/http send a POST again, on a fresh
// connection, when the kept-alive one it reused is closed before any answer
// (Request.isReplayable): that resend is the same try, so it must carry the
// same key — and the same webhook-id — as the request it stands in for, or an
// idempotency layer at the receiver would run the handler twice for one try.
func TestResendWithinATryKeepsItsIdempotencyKey(t *testing.T) {
	var mu sync.Mutex
	var keys, ids []string
	var cut atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		ids = append(ids, r.Header.Get(webhook.HeaderID))
		mu.Unlock()
		// The second request on a kept-alive connection: the receiver
		// closes it without answering (an idle timeout's race), once.
		if r.Context().Value(connRequests{}).(*atomic.Int64).Add(1) == 2 && cut.CompareAndSwap(false, true) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			_ = conn.Close()
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connRequests{}, new(atomic.Int64))
	}
	srv.Start()
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	ctx := context.Background()
	first := e.events(t, "acme", e.cancel(t, "acme", "k1").ID)[0].ID
	j := e.cancel(t, "acme", "k2")
	second := e.events(t, "acme", j.ID)[0].ID

	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	for _, id := range []string{first, second} { // the second reuses the first's connection
		if err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}}); err != nil {
			t.Fatalf("delivery of %s: %v", id, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !cut.Load() || len(keys) != 3 {
		t.Fatalf("%d requests (webhook-ids %q), the kept-alive connection cut: %v; want 3, the second event's sent again", len(keys), ids, cut.Load())
	}
	if ids[1] != second || ids[2] != second || keys[1] != keys[2] || !tryKey(second, 1).MatchString(keys[2]) {
		t.Fatalf("the resend within the try: webhook-ids %q, Idempotency-Keys %q; want %s twice, with one key %s.1.<8 hex>", ids[1:], keys[1:], second, second)
	}
	if ev := e.events(t, "acme", j.ID)[0]; ev.Status != store.EventDelivered || ev.Tries != 1 {
		t.Fatalf("the second event is %s after %d recorded tries; want delivered in one", ev.Status, ev.Tries)
	}
}
