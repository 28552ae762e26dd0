package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A configured webhook that a replica's start removes (SyncConfigWebhooks
// without it: a replica with an older configuration, during a rolling update)
// is kept marked removed so the outbox still writes the owner's events
// (migration 0022); to every reader it is no webhook, and a replica with the
// webhook in its configuration restores it.
func TestRemovedConfiguredWebhookIsNoWebhookUntilRestored(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/acme"}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the removed webhook reads as %+v (%v), want ErrNotFound", w, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND url IS NULL AND removed_until > now()`); n != 1 {
		t.Fatal("the removed configured webhook's row is not kept, marked removed: the events of jobs ending before it is restored are never written")
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/acme"}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://hooks.example.com/acme" {
		t.Fatalf("the restored webhook reads as %+v (%v)", w, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE removed_until IS NOT NULL`); n != 0 {
		t.Fatal("the restored webhook is still marked removed")
	}
}

// A stored key's webhook (`router keys create --webhook-url`) is the owner's
// webhook when the configuration sets none, but not while a configured
// webhook that overrode it is marked removed (a replica with an older
// configuration started during a rolling update, or a rollback): until its
// removed_until the owner has no webhook, so the events of the gap wait for
// the configured receiver instead of going to the key's stale URL signed
// with its secret (migration 0032). Once removed_until has passed (the
// webhook was removed on purpose) the key's webhook takes the owner at the
// next rebuild. Revoking the key then removes the owner's webhook: its row is
// marked removed, as a configured webhook's is, so the events of jobs ending
// meanwhile are written; such a row a new key's webhook takes back at once.
func TestStoredKeyWebhookTakesThePlaceOfARemovedConfiguredOne(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://stored.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://configured.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://configured.example.com/hook" || w.Secret != "" {
		t.Fatalf("with the configured webhook: %+v (%v), want it to override the key's", w, err)
	}
	for range 2 { // an older replica starts, and starts again: the window is not extended, the key's webhook still waits
		if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
			t.Fatal(err)
		}
		if w, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("while the configured webhook is removed within its window: %+v (%v), want no webhook (ErrNotFound), "+
				"not the key's stale one", w, err)
		}
	}
	// The window has passed (moved back rather than waited for).
	if _, err := b.db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_until = now() - interval '1 second' WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	want := store.Webhook{URL: "https://stored.example.com/hook", Secret: k.WebhookSecret}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after the configured webhook's redelivery window: %+v (%v), want the stored key's %+v", w, err, want)
	}
	if err := b.st.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the key's revocation: %+v (%v), want no webhook", w, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND url IS NULL AND secret IS NULL AND removed_until > now()
		AND NOT removed_configured`); n != 1 {
		t.Fatal("a revoked key's webhook row is not marked removed (as a key's, not a configured webhook's): " +
			"the events of jobs ending before the owner has a webhook again are never written")
	}
	k2, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://stored2.example.com/hook"})
	if err != nil {
		t.Fatalf("a new key's webhook for an owner whose last hooked key was revoked: %v", err)
	}
	want = store.Webhook{URL: "https://stored2.example.com/hook", Secret: k2.WebhookSecret}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after a new key's webhook: %+v (%v), want it %+v", w, err, want)
	}
}
