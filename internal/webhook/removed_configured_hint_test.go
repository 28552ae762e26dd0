package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// An owner with an unrevoked key made with --webhook-url, whose configured
// webhook (which overrode the key's) a replica's start removed: for the
// redelivery window the removed row keeps the configured webhook's place, the
// key's webhook does not take the owner (docs/api.md), and `router keys
// create --webhook-url` is refused — the way out for a webhook removed on
// purpose is `router keys forget-removed-webhook --owner` (docs/operations.md).
// Each try of the owner's events records, logs and shows the tenant the
// error for "no webhook", which says that no unrevoked key made with
// --webhook-url sets one (one does) and that the fix is `router keys create
// --webhook-url` (refused); the abandonment at retry_for repeats it. It
// should say that the configured webhook was removed and is kept in place
// until its window ends, and name forget-removed-webhook.
func TestRemovedConfiguredWebhookTryNamesForgetRemovedWebhook(t *testing.T) {
	ctx := context.Background()
	rc := newReceiver(t, func(int) int { return http.StatusNoContent })
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	if _, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: rc.srv.URL + "/key"}); err != nil {
		t.Fatal(err)
	}
	// A replica with acme's webhook in its configuration starts, then one
	// without it (removed on purpose, or a rolling update).
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": rc.srv.URL + "/configured"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	// What an operator who reads the error would do: refused.
	_, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: rc.srv.URL + "/new"})
	if err == nil {
		t.Fatal("a new hooked key was accepted while the removed configured webhook keeps its place")
	}
	e := &env{db: db, st: db.Store, svc: newServiceOf(t, db, webhook.ServiceConfig{
		Config: webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}},
	})}
	j := e.cancel(t, "acme", "k1")
	e.start(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := e.events(t, "acme", j.ID)
		if len(evs) == 1 && evs[0].Tries > 0 && evs[0].LastError != nil {
			msg := *evs[0].LastError
			if !strings.Contains(msg, "forget-removed-webhook") {
				t.Errorf("the try's error (stored, logged, shown by GET /v1/jobs/{id}/events) does not name `router keys forget-removed-webhook`, "+
					"the way to let the owner's hooked key take its events; `router keys create --webhook-url`, which it suggests, was refused: %v\nerror: %s", err, msg)
			}
			if strings.Contains(msg, "nor an unrevoked key made with --webhook-url sets one") {
				t.Errorf("the try's error says no unrevoked key made with --webhook-url sets a webhook, but key 1 does: %s", msg)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no try of the event within 30s: %+v", evs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
