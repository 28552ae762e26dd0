package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// removedWindow reads owner's removed webhook row: when it was removed
// (updated_at) and until when its place is kept.
func removedWindow(t *testing.T, b *bundle, owner string) (at, until time.Time) {
	t.Helper()
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT updated_at, removed_until FROM webhook_owners
		WHERE owner = $1 AND url IS NULL`, owner).Scan(&at, &until); err != nil {
		t.Fatal(err)
	}
	return at, until
}

// A key's webhook for an owner whose configured webhook a replica's start
// marked removed (a replica with an older configuration, during a rolling
// update) is refused while the removal's redelivery window runs, storing
// nothing: the replica with the newer configuration that starts next
// overrides it, so its secret would sign nothing. The refusal says when the
// webhook was removed, until when, and what to do. A rotation of the owner's
// older key's secret is refused alike. After the window (the webhook was
// removed on purpose) both are accepted.
func TestKeyWebhookRefusedWhileTheConfiguredOneIsRemoved(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	older, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://older.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://cfg.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil { // an older replica starts
		t.Fatal(err)
	}
	at, until := removedWindow(t, b, "acme")

	refused := func(what string, err error) {
		t.Helper()
		var configured *store.ConfiguredWebhookError
		if !errors.As(err, &configured) || configured.Owner != "acme" || configured.RemovedAt == nil || configured.RemovedUntil == nil ||
			!configured.RemovedAt.Equal(at) || !configured.RemovedUntil.Equal(until) {
			t.Fatalf("%s while acme's configured webhook is removed (at %v, until %v): %v; want a ConfiguredWebhookError with the removal's times",
				what, at, until, err)
		}
		if !errors.Is(err, store.ErrWebhookElsewhere) {
			t.Errorf("%s: %v is not ErrWebhookElsewhere", what, err)
		}
		msg := err.Error()
		for _, want := range []string{"api_keys[].webhook", "rolling update", at.UTC().Format(time.RFC3339),
			until.UTC().Format(time.RFC3339), "Finish the rolling update", "removed on purpose"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the refusal does not say %q: %s", what, want, msg)
			}
		}
	}
	_, err = b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	refused("create with a webhook", err)
	if n := count(t, b, `SELECT count(*) FROM api_keys`); n != 1 {
		t.Fatalf("the refused create stored a key: %d keys, want the older one only", n)
	}
	_, err = b.st.RotateWebhookSecret(ctx, "acme", time.Hour)
	refused("rotate the older key's secret", err)
	if n := count(t, b, `SELECT count(*) FROM api_keys WHERE id = $1 AND webhook_secret = $2 AND webhook_previous_secret IS NULL`,
		older.ID, older.WebhookSecret); n != 1 {
		t.Fatal("the refused rotation changed the older key's secret")
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("acme's webhook after the refusals: %+v (%v), want none", w, err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"}); err != nil {
		t.Fatalf("a key without a webhook meanwhile: %v", err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "globex", WebhookURL: "https://globex.example.com/hook"}); err != nil {
		t.Fatalf("another owner's webhook meanwhile: %v", err)
	}

	// The window has passed (moved back rather than waited for): the
	// webhook was removed on purpose.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_until = now() - interval '1 second' WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	if err != nil {
		t.Fatalf("create with a webhook after the window: %v", err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://new.example.com/hook" || w.Secret != k.WebhookSecret {
		t.Fatalf("acme's webhook after the window: %+v (%v), want the new key's", w, err)
	}
	r, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour)
	if err != nil || r.KeyID != k.ID {
		t.Fatalf("rotate after the window: %+v (%v), want the new key's rotated", r, err)
	}
}

// A replica that syncs the webhook back in its configuration ends the
// refusal at once, as the configured webhook is then set: a key's webhook is
// refused as for any configured owner.
func TestKeyWebhookRefusalOfARemovedConfiguredOneEndsWithItsRestore(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for _, urls := range []map[string]string{{"acme": "https://cfg.example.com/hook"}, {}, {"acme": "https://cfg.example.com/hook"}} {
		if err := b.st.SyncConfigWebhooks(ctx, urls); err != nil {
			t.Fatal(err)
		}
	}
	_, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	var configured *store.ConfiguredWebhookError
	if !errors.As(err, &configured) || configured.URL != "https://cfg.example.com/hook" || configured.RemovedAt != nil {
		t.Fatalf("create with a webhook once the configured webhook is back: %v; want the refusal naming it", err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE removed_configured OR removed_until IS NOT NULL`); n != 0 {
		t.Fatal("the restored configured webhook is still marked removed")
	}
}

// Migration 0032 adds webhook_owners.removed_configured: rows of every state
// get false (a removed row written before it cannot be told apart: it keeps
// its behaviour of before). A replica of the previous version, which does
// not know the column, keeps working on the newer schema (a rollback, or a
// rolling update): its restore of a removed configured webhook, and its
// rebuild letting a key's webhook take one, clear the flag rather than fail
// the check that keeps it coherent.
func TestRemovedConfiguredMigrationAndPreviousVersionWrites(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m store.Migration) bool {
		return strings.HasSuffix(m.Name, "_webhook_owner_removed_configured.sql")
	})
	if i < 0 {
		t.Fatal("no migration *_webhook_owner_removed_configured.sql")
	}
	m := ms[i]
	// The schema before the migration, with a row of each state.
	if _, err := b.db.Pool.Exec(ctx, `DROP TRIGGER IF EXISTS webhook_owners_removed_configured ON webhook_owners;
		DROP FUNCTION webhook_owner_removed_configured();
		ALTER TABLE webhook_owners DROP COLUMN removed_configured;
		DELETE FROM schema_migrations WHERE version = `+itoa(m.Version)+`;
		INSERT INTO webhook_owners (owner, url) VALUES ('configured', 'https://cfg.example.com/hook');
		INSERT INTO webhook_owners (owner, url, secret) VALUES ('keyed', 'https://key.example.com/hook', 'whsec_x');
		INSERT INTO webhook_owners (owner, url, removed_until) VALUES ('removed', NULL, now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	applied, err := b.st.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if !slices.Contains(applied, m.Name) {
		t.Fatalf("migrate applied %v; want %s", applied, m.Name)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE NOT removed_configured`); n != 3 {
		t.Fatalf("%d of 3 rows have removed_configured false after the migration", n)
	}

	// The removed row of before the migration is taken by a key's webhook,
	// as before it.
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "removed", WebhookURL: "https://removed.example.com/hook"})
	if err != nil {
		t.Fatalf("a key's webhook for an owner whose row was removed before the migration: %v", err)
	}
	if w, err := b.st.WebhookFor(ctx, "removed"); err != nil || w.Secret != k.WebhookSecret {
		t.Fatalf("owner removed's webhook: %+v (%v), want the new key's", w, err)
	}

	// The previous version's statements (SyncConfigWebhooks' restore, and
	// syncKeyWebhooks' take-over), on a row this version marked removed.
	previous := map[string]string{
		"restore": `INSERT INTO webhook_owners (owner, url) VALUES ('configured', 'https://cfg.example.com/hook')
			ON CONFLICT (owner) DO UPDATE SET url = EXCLUDED.url, secret = NULL,
				previous_secret = NULL, previous_until = NULL, removed_until = NULL, updated_at = now()`,
		"key take-over": `INSERT INTO webhook_owners (owner, url, secret) VALUES ('configured', 'https://key.example.com/hook', 'whsec_y')
			ON CONFLICT (owner) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret,
				previous_secret = EXCLUDED.previous_secret, previous_until = EXCLUDED.previous_until,
				removed_until = NULL, updated_at = now()
			WHERE webhook_owners.secret IS NOT NULL OR webhook_owners.removed_until IS NOT NULL`,
	}
	for _, what := range []string{"restore", "key take-over"} {
		if _, err := b.db.Pool.Exec(ctx, `UPDATE webhook_owners SET url = 'https://cfg.example.com/hook', secret = NULL, removed_until = NULL
			WHERE owner = 'configured'`); err != nil {
			t.Fatal(err)
		}
		if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'configured' AND removed_configured`); n != 1 {
			t.Fatal("the configured webhook this version removed is not marked removed_configured")
		}
		if _, err := b.db.Pool.Exec(ctx, previous[what]); err != nil {
			t.Fatalf("the previous version's %s of a removed configured webhook fails on the newer schema: %v", what, err)
		}
		if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'configured' AND url IS NOT NULL AND NOT removed_configured`); n != 1 {
			t.Fatalf("after the previous version's %s the row is not a live webhook with removed_configured false", what)
		}
	}
	// Nothing but a removed row keeps the flag.
	live := `url IS NOT NULL OR secret IS NOT NULL OR removed_until IS NULL`
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE `+live); n == 0 {
		t.Fatal("no live row left to check")
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_configured = true WHERE `+live); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE removed_configured`); n != 0 {
		t.Fatalf("%d live rows kept removed_configured set by hand", n)
	}
}

// Once a removed configured webhook's window has passed, the maintenance
// leader's pass (ExpireRemovedWebhooks) lets the owner's stored key's webhook
// take the owner at once; without it the owner had no webhook — its events
// not even written — until the next replica start or key command (rdiff47).
func TestExpireRemovedWebhooksLetsTheKeysWebhookTakeOver(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://stored.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://served.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil { // removed from the configuration
		t.Fatal(err)
	}
	if ended, err := b.st.ExpireRemovedWebhooks(ctx); err != nil || ended {
		t.Fatalf("within the window: ended %v, err %v; want nothing ended", ended, err)
	}
	if _, err := b.st.WebhookFor(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("within the window acme's webhook: %v, want none (ErrNotFound)", err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_until = now() - interval '1 second' WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	if ended, err := b.st.ExpireRemovedWebhooks(ctx); err != nil || !ended {
		t.Fatalf("after the window: ended %v, err %v; want the removed webhook ended", ended, err)
	}
	w, err := b.st.WebhookFor(ctx, "acme")
	if err != nil || w.URL != "https://stored.example.com/hook" || w.Secret != k.WebhookSecret {
		t.Fatalf("after the window acme's webhook: %+v (%v), want the stored key's", w, err)
	}
}
