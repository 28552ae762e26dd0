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
// webhook when the configuration sets none: removing the configured webhook
// that overrode it brings the key's back at once, as when the configured row
// was deleted, rather than leaving the removed row in its place. Revoking the
// key then removes the owner's webhook: its row is marked removed, as a
// configured webhook's is, so the events of jobs ending meanwhile are written.
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
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	want := store.Webhook{URL: "https://stored.example.com/hook", Secret: k.WebhookSecret}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after the configured webhook's removal: %+v (%v), want the stored key's %+v", w, err, want)
	}
	if err := b.st.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the key's revocation: %+v (%v), want no webhook", w, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND url IS NULL AND secret IS NULL AND removed_until > now()`); n != 1 {
		t.Fatal("a revoked key's webhook row is not marked removed: the events of jobs ending before the owner has a webhook again are never written")
	}
}
