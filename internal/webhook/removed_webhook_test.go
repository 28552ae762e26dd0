package webhook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// docs/api.md, "Shutdown and rolling updates": a replica restarted with an
// older configuration removes the owner's webhook; "until a replica with the
// newer configuration starts again, the owner's events are failed tries too
// ... and are delivered once it is back". A job that ends inside that gap —
// a cancellation (the outbox trigger) or a batched win (the win's own
// statement) — must therefore get its event, delivered once the webhook is
// restored. The removal deleted the owner's row, and the outbox writes events
// only for owners with one: those jobs got no event, ever.
func TestEventOfAJobEndedWhileAnOlderReplicaRemovedTheWebhookIsDelivered(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()

	// A replica with the older configuration (no webhook for acme) starts.
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	cancelled := e.cancel(t, "acme", "cancelled-in-the-gap")
	won := e.succeed(t, "acme", "won-in-the-gap")
	for _, j := range []*store.Job{cancelled, won} {
		if evs := e.events(t, "acme", j.ID); len(evs) != 1 {
			t.Fatalf("job %s (%s), ended while the webhook was removed by an older replica, has %d events: its completion is never delivered",
				j.ID, j.IdempotencyKey, len(evs))
		}
	}
	// A replica with the newer configuration starts again.
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{"acme": rc.srv.URL}); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	got := map[string]bool{}
	for range 2 {
		got[verified(t, rc.next(t)).Job.ID] = true
	}
	if !got[cancelled.ID] || !got[won.ID] {
		t.Fatalf("delivered %v, want the events of %s and %s", got, cancelled.ID, won.ID)
	}
	e.waitStatus(t, "acme", cancelled.ID, store.EventDelivered, 1)
	e.waitStatus(t, "acme", won.ID, store.EventDelivered, 1)
}

// A webhook removed on purpose stops costing events: once it has been removed
// for longer than the redelivery window (retry_for + backoff_cap + timeout)
// the outbox writes no more events for the owner, and the next sync of the
// configured webhooks deletes its row. A replica with the older configuration
// starting again within the window does not extend it.
func TestWebhookRemovedLongerThanTheRedeliveryWindowGetsNoEventsAndIsDeleted(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	removedUntil := func() (until *time.Time, rows int) {
		t.Helper()
		err := e.db.Pool.QueryRow(ctx, `SELECT max(removed_until), count(*) FROM webhook_owners WHERE owner = 'acme'`).Scan(&until, &rows)
		if err != nil {
			t.Fatal(err)
		}
		return until, rows
	}

	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	first, rows := removedUntil()
	if first == nil || rows != 1 {
		t.Fatalf("after the removal: %d rows, removed until %v; want acme's row kept, marked removed", rows, first)
	}
	// The window is the store's redelivery window, counted from the removal.
	var window time.Duration
	if err := e.db.Pool.QueryRow(ctx, `SELECT extract(epoch FROM removed_until - updated_at)::bigint * 1000000000
		FROM webhook_owners WHERE owner = 'acme'`).Scan(&window); err != nil {
		t.Fatal(err)
	}
	if window != store.DefaultRedeliveryWindow {
		t.Fatalf("removed for %s, want the redelivery window %s", window, store.DefaultRedeliveryWindow)
	}
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if again, _ := removedUntil(); again == nil || !again.Equal(*first) {
		t.Fatalf("a second sync without the webhook moved its end from %v to %v", first, again)
	}

	// The window has passed (moved back rather than waited for).
	if _, err := e.db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_until = now() - interval '1 second' WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	for _, j := range []*store.Job{e.cancel(t, "acme", "cancelled-after-the-window"), e.succeed(t, "acme", "won-after-the-window")} {
		if evs := e.events(t, "acme", j.ID); len(evs) != 0 {
			t.Fatalf("job %s (%s), ended after the webhook was removed for longer than the redelivery window, has %d events, want none",
				j.ID, j.IdempotencyKey, len(evs))
		}
	}
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if _, rows := removedUntil(); rows != 0 {
		t.Fatalf("acme's webhook, removed longer than the redelivery window, still has %d rows after a sync", rows)
	}
}
