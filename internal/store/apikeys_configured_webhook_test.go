package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A key with a webhook for an owner whose webhook a router's configuration
// sets (SyncConfigWebhooks) is refused, storing nothing: the configured
// webhook overrides it (SPEC §16), so its secret would sign nothing. A key
// without a webhook, another owner's, and one after the configured webhook
// was removed for longer than its redelivery window are stored (within it
// the removed webhook's place is kept: see
// TestKeyWebhookRefusedWhileTheConfiguredOneIsRemoved).
func TestCreateKeyWithWebhookRefusedWhenConfigured(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://cfg.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	_, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	var configured *store.ConfiguredWebhookError
	if !errors.As(err, &configured) || configured.Owner != "acme" || configured.URL != "https://cfg.example.com/hook" {
		t.Fatalf("create with a webhook for a configured owner: %v; want a ConfiguredWebhookError naming the configured URL", err)
	}
	if n := count(t, b, `SELECT count(*) FROM api_keys`); n != 0 {
		t.Fatalf("the refused create stored %d keys", n)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://cfg.example.com/hook" || w.Secret != "" {
		t.Fatalf("acme's webhook after the refusal: %+v (%v), want the configured one", w, err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"}); err != nil {
		t.Fatalf("a key without a webhook for a configured owner: %v", err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "globex", WebhookURL: "https://globex.example.com/hook"}); err != nil {
		t.Fatalf("another owner's webhook: %v", err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil { // the configuration dropped it
		t.Fatal(err)
	}
	_, err = b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	if !errors.As(err, &configured) || configured.RemovedUntil == nil {
		t.Fatalf("create with a webhook while the removed configured webhook's window runs: %v; want a ConfiguredWebhookError naming the removal", err)
	}
	// The window has passed (moved back rather than waited for).
	if _, err := b.db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_until = now() - interval '1 second' WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	if err != nil {
		t.Fatalf("after the configured webhook was removed for longer than its redelivery window: %v", err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.Secret != k.WebhookSecret {
		t.Fatalf("acme's webhook: %+v (%v), want the new key's", w, err)
	}
}

// A replica's start that syncs the owner's configured webhook while the key
// is being created cannot slip in between the check and the insert: the
// check waits for it and then refuses.
func TestCreateKeyWithWebhookRefusedWhenConfigSyncCommitsMeanwhile(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	conn, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// What SyncConfigWebhooks does, held open before its commit.
	sync, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sync.Rollback(ctx)
	if _, err := sync.Exec(ctx, `LOCK TABLE webhook_owners IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	if _, err := sync.Exec(ctx, `INSERT INTO webhook_owners (owner, url) VALUES ('acme', 'https://cfg.example.com/hook')`); err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() {
		_, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
		created <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%webhook_owners%'`) > 0 {
			break // the create waits for the sync's lock
		}
		if time.Now().After(deadline) {
			t.Fatal("the create never waited for the sync's lock")
		}
	}
	if err := sync.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var configured *store.ConfiguredWebhookError
	if err := <-created; !errors.As(err, &configured) {
		t.Fatalf("create committed alongside the sync: %v; want a ConfiguredWebhookError", err)
	}
	if n := count(t, b, `SELECT count(*) FROM api_keys`); n != 0 {
		t.Fatalf("the refused create stored %d keys", n)
	}
}

// Revoking a revoked key changes nothing and says so, with when it was
// revoked.
func TestRevokeAPIKeyResultSaysAlreadyRevoked(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := b.st.RevokeAPIKeyResult(ctx, k.ID)
	if err != nil || first.Already || first.RevokedAt.IsZero() {
		t.Fatalf("first revocation: %+v (%v), want a new one", first, err)
	}
	again, err := b.st.RevokeAPIKeyResult(ctx, k.ID)
	if err != nil || !again.Already || !again.RevokedAt.Equal(first.RevokedAt) {
		t.Fatalf("second revocation: %+v (%v), want Already with the first's time %s", again, err, first.RevokedAt)
	}
	if _, err := b.st.RevokeAPIKeyResult(ctx, k.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown key: %v, want ErrNotFound", err)
	}
}
