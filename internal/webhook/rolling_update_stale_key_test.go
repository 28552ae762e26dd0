package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// waitEvent polls the event of job jobID until done says it is what the
// test waits for (the worker records a try after the receiver answered).
func (e *env) waitEvent(t *testing.T, owner, jobID, what string, done func(*store.Event) bool) *store.Event {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := e.events(t, owner, jobID)
		if len(evs) == 1 && done(evs[0]) {
			return evs[0]
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(evs)
			t.Fatalf("the event of job %s never %s: %s", jobID, what, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// docs/api.md, "Shutdown and rolling updates": while a replica with an older
// configuration (without the owner's api_keys[].webhook) runs, the owner's
// events are failed tries, delivered once a replica with the newer
// configuration starts again. An owner's older key made with --webhook-url,
// overridden by the configured webhook, must not take the webhook meanwhile:
// it did, and the events of the gap were signed with its secret and
// delivered to its stale URL, never to the configured receiver.
func TestRollingUpdateGapEventWaitsForTheConfiguredWebhookNotAStaleKeys(t *testing.T) {
	stale := newReceiver(t, func(int) int { return http.StatusOK })
	good := newReceiver(t, func(int) int { return http.StatusOK })
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	ctx := context.Background()
	if _, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: stale.srv.URL}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": good.srv.URL}); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, st: db.Store, svc: newService(t, db, 5*time.Second)}
	e.start(t)
	e.succeed(t, "acme", "before")
	verified(t, good.next(t))

	// Rolling update: a replica with the older configuration starts.
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if w, err := db.Store.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("during the rolling-update gap acme's webhook is %+v (%v), want none (ErrNotFound): "+
			"the stale stored key's webhook took the configured one's place", w, err)
	}
	gap := e.succeed(t, "acme", "in-the-gap")
	ev := e.waitEvent(t, "acme", gap.ID, "got a try", func(ev *store.Event) bool { return len(ev.Deliveries) > 0 })
	if d := ev.Deliveries[0]; ev.Status != store.EventPending || d.StatusCode != nil || d.Error == nil || !strings.Contains(*d.Error, "no webhook") {
		b, _ := json.Marshal(d)
		t.Fatalf("the gap event's first try was %s and the event is %s; "+
			"want a failed try for want of a webhook, the event pending for the configured receiver", b, ev.Status)
	}
	select {
	case r := <-stale.got:
		t.Fatalf("the gap event went to the stale stored key's URL (webhook-id %s)", r.header.Get(webhook.HeaderID))
	default:
	}

	// A replica with the newer configuration starts again: the gap event
	// goes to the configured receiver, signed with the configured secret.
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": good.srv.URL}); err != nil {
		t.Fatal(err)
	}
	r := good.next(t)
	if p := verified(t, r); p.Job.ID != gap.ID || r.header.Get(webhook.HeaderID) != ev.ID {
		t.Fatalf("the configured receiver got job %s (webhook-id %s), want the gap's %s (event %s)",
			p.Job.ID, r.header.Get(webhook.HeaderID), gap.ID, ev.ID)
	}
	e.waitEvent(t, "acme", gap.ID, "was delivered", func(ev *store.Event) bool { return ev.Status == store.EventDelivered })
	select {
	case r := <-stale.got:
		t.Fatalf("the stale stored key's URL got a delivery (webhook-id %s)", r.header.Get(webhook.HeaderID))
	default:
	}
}
