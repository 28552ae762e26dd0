package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// The same as TestSmallMaxResponseBytesHidesTheWebhookPathItCuts, end
// to end: with webhooks.max_response_bytes: 128, a receiver's Spring Boot
// JSON error, which quotes the path it was asked for, is cut by the limit
// inside the token of a Discord-style webhook URL (/api/webhooks/<id>/<token>),
// and the token's start is stored as the try's error (GET
// /v1/jobs/{id}/events) and logged by the router and by River.
func TestSmallMaxResponseBytesKeepsTheCutTokenOutOfLogsAndEvents(t *testing.T) {
	const token = "Xr4vQ9mZk2LpT7wNc8yBd1sFh6jGa3uEo5iKq0eRt9WzYx2VbN4mLp8sDf3gHj7kQw1e"
	const path = "/api/webhooks/1187319411432349817/" + token
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1) == 1 {
			// Spring Boot's default JSON error for a path it has no mapping for.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"timestamp":"2026-12-08T00:19:24.164+00:00","status":404,"error":"Not Found","path":"%s"}`, r.URL.Path)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	if err := db.Store.SyncConfigWebhooks(context.Background(), map[string]string{"acme": srv.URL + path}); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, st: db.Store, svc: newServiceOf(t, db, webhook.ServiceConfig{
		Config: webhook.Config{Timeout: 5 * time.Second, MaxResponseBytes: 128, Secrets: map[string]string{"acme": secret}},
		Log:    log,
	})}
	j := e.cancel(t, "acme", "k1")
	e.start(t)
	ev := e.waitStatus(t, "acme", j.ID, store.EventDelivered, 2)
	if d := ev.Deliveries[0]; d.Error == nil || !strings.HasPrefix(*d.Error, "the webhook answered 404") {
		t.Fatalf("the first try: %+v, want the 404", d)
	} else if strings.Contains(*d.Error, token[:8]) {
		t.Errorf("GET /v1/jobs/{id}/events shows the start of the webhook URL's token in the try's error: %q", *d.Error)
	}
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	for l := range strings.Lines(text) {
		if strings.Contains(l, token[:8]) {
			t.Errorf("a log line carries the start of the webhook URL's token:\n%s", l)
		}
	}
}
