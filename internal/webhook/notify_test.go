package webhook_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/webhook"
)

// listeningOnly starts a delivery service that polls once an hour, so that
// only River's insert notification wakes it, and returns once River's
// producer is listening: River's first fetch happens at start, so one event
// is delivered first.
func listeningOnly(t *testing.T) (*env, *receiver) {
	t.Helper()
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	svc, err := webhook.NewService(e.db.Pool, e.st, webhook.ServiceConfig{
		Config:       webhook.Config{Secrets: map[string]string{"acme": secret}},
		PollInterval: time.Hour,
		Log:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	e.cancel(t, "acme", "k0")
	verified(t, rc.next(t))
	return e, rc
}

// The outbox trigger wakes River's producers with River's insert notification:
// with polling effectively off, a new event is still delivered.
func TestTriggerNotifiesRiver(t *testing.T) {
	e, rc := listeningOnly(t)
	j := e.cancel(t, "acme", "k1")
	if p := verified(t, rc.next(t)); p.Job.ID != j.ID {
		t.Fatalf("delivered %s, want %s", p.Job.ID, j.ID)
	}
}

// Issue 11: a batched win does not notify inside its transaction; the store
// wakes River after the commit, on the channel and with the payload River's
// producers listen for: with polling effectively off, the win's event is
// still delivered.
func TestBatchedWinWakesRiver(t *testing.T) {
	e, rc := listeningOnly(t)
	j := e.succeed(t, "acme", "k1")
	p := verified(t, rc.next(t))
	if p.Job.ID != j.ID || p.Type != "job.succeeded" {
		t.Fatalf("delivered %s %s, want job.succeeded of %s", p.Type, p.Job.ID, j.ID)
	}
}
