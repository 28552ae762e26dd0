package store_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// River's tables are part of the router's migrations, and migrating again is
// a no-op.
func TestMigrateIncludesRiverAndIsIdempotent(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	applied, err := b.st.Migrate(ctx)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate: applied %v, err %v", applied, err)
	}
	ok, err := b.st.MigrationsCurrent(ctx)
	if err != nil || !ok {
		t.Fatalf("migrations current: %v %v", ok, err)
	}
	var n int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&n); err != nil {
		t.Fatalf("River's table in the test schema: %v", err)
	}
	var schema string
	if err := b.db.Pool.QueryRow(ctx, `SELECT table_schema FROM information_schema.tables WHERE table_name = 'river_job' AND table_schema = current_schema()`).Scan(&schema); err != nil || schema != b.db.Schema {
		t.Fatalf("river_job is in schema %q, want the test's %q (%v)", schema, b.db.Schema, err)
	}
}

// Webhook owners come from the configuration and from stored keys; the
// configuration wins; revoking the key removes its webhook.
func TestWebhookOwnersSync(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, storeNewKey("globex", "https://globex.example/hook"))
	if err != nil || k.WebhookSecret == "" || k.WebhookSecret[:6] != "whsec_" {
		t.Fatalf("create: %+v %v", k, err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://acme.example/hook"}); err != nil {
		t.Fatal(err)
	}
	w, err := b.st.WebhookFor(ctx, "globex")
	if err != nil || w.URL != "https://globex.example/hook" || w.Secret != k.WebhookSecret {
		t.Fatalf("globex webhook %+v %v", w, err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://acme.example/hook" || w.Secret != "" {
		t.Fatalf("acme webhook %+v %v", w, err)
	}
	if err := b.st.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.WebhookFor(ctx, "globex"); err == nil {
		t.Fatal("a revoked key's webhook stays")
	}
	if _, err := b.st.WebhookFor(ctx, "acme"); err != nil {
		t.Fatalf("revoking a key dropped the configured webhook: %v", err)
	}
	keys, err := b.st.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil || *keys[0].WebhookURL != "https://globex.example/hook" {
		t.Fatalf("list: %+v %v", keys, err)
	}
}

func storeNewKey(owner, url string) store.NewAPIKey {
	return store.NewAPIKey{Owner: owner, WebhookURL: url}
}
