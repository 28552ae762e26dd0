package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A rotation that commits while another transaction rebuilds the owners'
// webhooks (`router keys create`/`revoke` for any owner, another rotation,
// a replica's start: SyncConfigWebhooks) must leave the owner's webhook
// signing with the new secret. A statement trigger holds the rebuild open
// after its INSERT into webhook_owners, so the interleaving is certain.
func TestRotationConcurrentWithRebuildKeepsNewSecret(t *testing.T) {
	rotateDuringRebuild(t, func(b *bundle) error {
		_, err := b.st.CreateAPIKeyWith(context.Background(), store.NewAPIKey{Owner: "globex", WebhookURL: "https://globex.example.com/hook"})
		return err
	})
}

// Two operators (or a script) rotating two owners' secrets at once: the
// second owner's rotation is lost the same way.
func TestConcurrentRotationsOfTwoOwners(t *testing.T) {
	rotateDuringRebuild(t, func(b *bundle) error {
		_, err := b.st.RotateWebhookSecret(context.Background(), "initech", time.Hour)
		return err
	})
}

// rotateDuringRebuild rotates acme's secret while rebuild (which rebuilds
// webhook_owners) is held open after its INSERT into webhook_owners, and
// checks acme's webhook signs with the new secret.
func rotateDuringRebuild(t *testing.T, rebuild func(b *bundle) error) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://acme.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "initech", WebhookURL: "https://initech.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `CREATE TABLE pause_on (x int);
		CREATE FUNCTION pause_rebuild() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
		BEGIN
			IF EXISTS (SELECT 1 FROM pause_on) THEN PERFORM pg_advisory_xact_lock_shared(4242); END IF;
			RETURN NULL;
		END $$;
		CREATE TRIGGER pause_rebuild AFTER INSERT ON webhook_owners FOR EACH STATEMENT EXECUTE FUNCTION pause_rebuild();
		INSERT INTO pause_on VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	gate, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Release()
	if _, err := gate.Exec(ctx, `SELECT pg_advisory_lock(4242)`); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what, cond string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var n int
			if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND `+cond).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The rebuild: a key for another owner, held open after its INSERT.
	rebuilt := make(chan error, 1)
	go func() { rebuilt <- rebuild(b) }()
	waitFor("the rebuild pausing", `wait_event = 'advisory'`)
	if _, err := b.db.Pool.Exec(ctx, `DELETE FROM pause_on`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   store.RotatedWebhookSecret
		err error
	}
	rotated := make(chan result, 1)
	go func() {
		r, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour)
		rotated <- result{r, err}
	}()
	waitFor("the rotation waiting on the rebuild", `wait_event <> 'advisory'`)
	if _, err := gate.Exec(ctx, `SELECT pg_advisory_unlock(4242)`); err != nil {
		t.Fatal(err)
	}
	if err := <-rebuilt; err != nil {
		t.Fatal(err)
	}
	res := <-rotated
	if res.err != nil {
		t.Fatal(res.err)
	}
	w, err := b.st.WebhookFor(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if w.Secret != res.r.Secret || w.PreviousSecret != k.WebhookSecret {
		t.Fatalf("after the rotation the owner's webhook signs with the old secret only (secret is the old one: %v, previous %q): "+
			"the CLI printed a new secret that signs nothing, and a receiver that switches to it refuses every delivery",
			w.Secret == k.WebhookSecret, w.PreviousSecret)
	}
}
