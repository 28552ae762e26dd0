package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A key rotation done revoke-first (or a revoke of the owner's only hooked
// key): `router keys revoke` tells the operator to give the owner a webhook
// again. The stored key's webhook_owners row was deleted at once, so a job of
// the owner that ended in that gap — one already running when the key was
// revoked — got no event at all: nothing was delivered to the new webhook,
// nothing showed in GET /v1/jobs/{id}/events. The row is now marked removed
// for the redelivery window, as a configured webhook's is (migration 0022).
// Found by review.
func TestJobEndingAfterHookedKeyRevokedIsAnnounced(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	old, err := b.st.CreateAPIKeyWith(ctx, storeNewKey("globex", "https://globex.example/hook"))
	if err != nil {
		t.Fatal(err)
	}
	// A job of the owner, running while its key (and webhook) is revoked.
	j, c := runningJob(t, b.st, "globex", "inflight")
	if err := b.st.RevokeAPIKey(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	if won, err := b.st.Complete(ctx, c); err != nil || !won {
		t.Fatalf("complete: %v %v", won, err)
	}
	// The operator follows the warning: a new hooked key within the window.
	created, err := b.st.CreateAPIKeyWith(ctx, storeNewKey("globex", "https://globex.example/new-hook"))
	if err != nil {
		t.Fatal(err)
	}
	if created.ReplacedWebhookURL != "" {
		t.Errorf("the new key's webhook replaced %q: the revoked key's webhook is removed, there was none to replace", created.ReplacedWebhookURL)
	}
	evs, err := b.st.JobEvents(ctx, "globex", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != "job.succeeded" || evs[0].Status != store.EventPending {
		t.Fatalf("job %s of owner globex succeeded after its hooked key was revoked, and the owner got a webhook again "+
			"right after: events %+v, want one job.succeeded pending for the new webhook — the completion is never announced",
			j.ID, evs)
	}
	// The pending event goes to the new key's webhook, signed with its secret.
	_, wh, _, err := b.st.EventForDelivery(ctx, evs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Webhook{URL: "https://globex.example/new-hook", Secret: created.WebhookSecret}
	if wh == nil || *wh != want {
		t.Fatalf("the event's webhook is %+v, want the new key's %+v", wh, want)
	}
}

// Revoking the owner's last hooked key marks its webhook row removed for
// Options.RedeliveryWindow on the database clock: no URL, no secret (nor a
// rotation's previous one) kept, and to every reader no webhook. The owner's
// events are written until removed_until — by the batched win and the outbox
// trigger alike — and no longer after it; revoking again does not extend the
// window.
func TestRevokedKeyWebhookIsRemovedForTheRedeliveryWindow(t *testing.T) {
	const window = 3*time.Hour + 7*time.Second
	db := testdb.New(t, store.Options{RedeliveryWindow: window})
	b := &bundle{db: db, st: db.Store}
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, storeNewKey("acme", "https://acme.example/hook"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour); err != nil {
		t.Fatal(err)
	}
	r, err := b.st.RevokeAPIKeyResult(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the revocation of acme's only hooked key its webhook reads as %+v (%v), want ErrNotFound", w, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND url IS NULL AND secret IS NULL
		AND previous_secret IS NULL AND previous_until IS NULL AND removed_until = updated_at + $1::interval`, window); n != 1 {
		t.Fatalf("acme's webhook row is not marked removed until now() + the redelivery window (%s), with no secret kept", window)
	}
	var until time.Time
	if err := b.db.Pool.QueryRow(ctx, `SELECT removed_until FROM webhook_owners WHERE owner = 'acme'`).Scan(&until); err != nil {
		t.Fatal(err)
	}
	if r.EventsUntil == nil || !r.EventsUntil.Equal(until) {
		t.Fatalf("RevokeAPIKeyResult's EventsUntil is %v, want the row's removed_until %v", r.EventsUntil, until)
	}
	// Within the window: a win (winSQL) and a cancellation (the trigger)
	// write their events.
	winFresh(t, b.st, "acme", "won")
	cancelled, _ := runningJob(t, b.st, "acme", "cancelled")
	if err := b.st.CancelJob(ctx, "acme", cancelled.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE owner = 'acme'`); n != 2 {
		t.Fatalf("%d events written for acme within its removed webhook's window, want 2 (job.succeeded, job.cancelled)", n)
	}
	// Revoking again changes nothing, the window included.
	if again, err := b.st.RevokeAPIKeyResult(ctx, k.ID); err != nil || !again.Already {
		t.Fatalf("revoke again: %+v %v", again, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND removed_until = $1`, until); n != 1 {
		t.Fatal("revoking the key again moved the end of acme's removed webhook's window")
	}
	// Past the window: no more events, and the next rebuild deletes the row.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_until = now() - interval '1 second' WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	winFresh(t, b.st, "acme", "late")
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE owner = 'acme'`); n != 2 {
		t.Fatalf("%d events for acme after its removed webhook's window ended, want still 2", n)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, storeNewKey("globex", "https://globex.example/hook")); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme'`); n != 0 {
		t.Fatal("a rebuild of the webhooks kept acme's row past its removed window")
	}
}

// Revoking a hooked key while the owner has another unrevoked one brings the
// older key's webhook back, as before: nothing is marked removed.
func TestRevokedKeyWebhookFallsBackToAnOlderKeysWebhook(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	older, err := b.st.CreateAPIKeyWith(ctx, storeNewKey("acme", "https://older.example/hook"))
	if err != nil {
		t.Fatal(err)
	}
	newer, err := b.st.CreateAPIKeyWith(ctx, storeNewKey("acme", "https://newer.example/hook"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.st.RevokeAPIKeyResult(ctx, newer.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.EventsUntil != nil {
		t.Errorf("EventsUntil = %v, want nil: acme still has a webhook", r.EventsUntil)
	}
	want := store.Webhook{URL: "https://older.example/hook", Secret: older.WebhookSecret}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after revoking the newer key: %+v (%v), want the older key's %+v", w, err, want)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE removed_until IS NOT NULL`); n != 0 {
		t.Fatal("a webhook row is marked removed though acme still has a hooked key")
	}
}
