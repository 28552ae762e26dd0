package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A configured webhook a replica's start removed keeps its place for its
// redelivery window; ForgetRemovedWebhook (the webhook was removed on
// purpose) ends that at once: the owner's key's webhook takes the owner, and
// a key's new webhook is accepted. An owner without such a row is
// ErrNoRemovedWebhook, and nothing changes.
func TestForgetRemovedWebhook(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	older, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://older.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "globex", WebhookURL: "https://globex.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://cfg.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil { // the configured webhook is removed
		t.Fatal(err)
	}
	at, until := removedWindow(t, b, "acme")

	// Owners without a removed configured webhook: a stored key's (globex),
	// none at all (initech). Nothing changes.
	before := count(t, b, `SELECT count(*) FROM webhook_owners`)
	for _, owner := range []string{"globex", "initech"} {
		if f, err := b.st.ForgetRemovedWebhook(ctx, owner); !errors.Is(err, store.ErrNoRemovedWebhook) || !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("forget %s's removed webhook: %+v, %v; want ErrNoRemovedWebhook", owner, f, err)
		}
	}
	if w, err := b.st.WebhookFor(ctx, "globex"); err != nil || w.URL != "https://globex.example.com/hook" {
		t.Fatalf("globex's webhook after a refused forget: %+v (%v)", w, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners`); n != before {
		t.Fatalf("refused forgets changed webhook_owners: %d rows, were %d", n, before)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("acme's webhook before the forget: %+v (%v), want none", w, err)
	}

	f, err := b.st.ForgetRemovedWebhook(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if f.URL != "https://older.example.com/hook" || f.KeyID != older.ID || !f.RemovedAt.Equal(at) || !f.RemovedUntil.Equal(until) {
		t.Fatalf("forget: %+v; want the older key %d's webhook in force, the removal at %v until %v", f, older.ID, at, until)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://older.example.com/hook" || w.Secret != older.WebhookSecret {
		t.Fatalf("acme's webhook after the forget: %+v (%v), want the older key's", w, err)
	}
	if _, err := b.st.ForgetRemovedWebhook(ctx, "acme"); !errors.Is(err, store.ErrNoRemovedWebhook) {
		t.Fatalf("forget again: %v; want ErrNoRemovedWebhook", err)
	}
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	if err != nil {
		t.Fatalf("create with a webhook after the forget: %v", err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://new.example.com/hook" || w.Secret != k.WebhookSecret {
		t.Fatalf("acme's webhook after the create: %+v (%v), want the new key's", w, err)
	}

	// A replica whose configuration sets it takes the owner back.
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://cfg.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://cfg.example.com/hook" {
		t.Fatalf("acme's webhook after a replica with it started: %+v (%v), want the configured one", w, err)
	}
}

// An owner without a hooked key is left without a webhook: the removed row
// is gone, and the result says no webhook is in force.
func TestForgetRemovedWebhookWithoutAKeysWebhook(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for _, urls := range []map[string]string{{"acme": "https://cfg.example.com/hook"}, {}} {
		if err := b.st.SyncConfigWebhooks(ctx, urls); err != nil {
			t.Fatal(err)
		}
	}
	f, err := b.st.ForgetRemovedWebhook(ctx, "acme")
	if err != nil || f.URL != "" || f.KeyID != 0 {
		t.Fatalf("forget: %+v (%v); want no webhook in force", f, err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme'`); n != 0 {
		t.Fatalf("acme keeps %d webhook_owners rows after the forget", n)
	}
}
