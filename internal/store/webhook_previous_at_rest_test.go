package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// syncKeyWebhooks says a secret whose rotation overlap has ended "is not
// kept at rest (it may have been rotated out because it leaked)". It is only
// cleared by a rebuild of the owners' webhooks (a key command, a replica's
// start, or the leader's ExpireRemovedWebhooks when a removed webhook is
// due). The leader's periodic pass, with nothing removed to end, leaves the
// ended overlap's secret in api_keys and webhook_owners indefinitely.
// (The reviewer's proof test, rwh9 F1.)
func TestEndedOverlapSecretNotKeptAtRest(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://acme.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour); err != nil {
		t.Fatal(err)
	}
	// The overlap ends (moved into the past on the database clock).
	if _, err := b.db.Pool.Exec(ctx, `UPDATE api_keys SET webhook_previous_until = now() - interval '1 second' WHERE webhook_previous_until IS NOT NULL;
		UPDATE webhook_owners SET previous_until = now() - interval '1 second' WHERE previous_until IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	// What the maintenance leader runs before every retention pass.
	if _, err := b.st.ExpireRemovedWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM api_keys WHERE webhook_previous_secret IS NOT NULL`); n != 0 {
		t.Errorf("api_keys still holds %d rotated-out secret(s) whose overlap has ended", n)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE previous_secret IS NOT NULL`); n != 0 {
		t.Errorf("webhook_owners still holds %d rotated-out secret(s) whose overlap has ended", n)
	}
}

// The leader's pass erases only ended overlaps: a running one keeps its
// secret (it still signs), and another owner's ended one is erased beside
// it. Erasing secrets alone is not reported as removed webhooks ended (the
// leader logs that).
func TestLeaderPassKeepsRunningOverlap(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for _, owner := range []string{"acme", "globex"} {
		if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: owner, WebhookURL: "https://" + owner + ".example.com/hook"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.RotateWebhookSecret(ctx, owner, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	b.exec(t, `UPDATE api_keys SET webhook_previous_until = now() - interval '1 second' WHERE owner = 'globex'`)
	b.exec(t, `UPDATE webhook_owners SET previous_until = now() - interval '1 second' WHERE owner = 'globex'`)
	ended, err := b.st.ExpireRemovedWebhooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ended {
		t.Error("ExpireRemovedWebhooks reported removed webhooks ended; there were none, only an ended overlap")
	}
	if n := count(t, b, `SELECT count(*) FROM api_keys WHERE owner = 'acme' AND webhook_previous_secret IS NOT NULL AND webhook_previous_until > now()`); n != 1 {
		t.Errorf("acme's running overlap in api_keys: %d rows, want 1 (it still signs)", n)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND previous_secret IS NOT NULL AND previous_until > now()`); n != 1 {
		t.Errorf("acme's running overlap in webhook_owners: %d rows, want 1 (it still signs)", n)
	}
	if n := count(t, b, `SELECT count(*) FROM api_keys WHERE owner = 'globex' AND (webhook_previous_secret IS NOT NULL OR webhook_previous_until IS NOT NULL)`); n != 0 {
		t.Errorf("globex's ended overlap still in api_keys (%d rows)", n)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'globex' AND (previous_secret IS NOT NULL OR previous_until IS NOT NULL)`); n != 0 {
		t.Errorf("globex's ended overlap still in webhook_owners (%d rows)", n)
	}
}

// A rotation locks its key's row, then the owners' webhooks
// (lockWebhookOwners); the leader's erasure of ended overlaps takes the
// owners' webhooks, then the keys' rows. Had the erasure waited for a key
// row a rotation holds, the two would deadlock once the rotation asked for
// the owners' webhooks: PostgreSQL aborts one, a rotation the operator must
// run again. The erasure skips the held row (the rotation rewrites it), and
// the next pass erases it once it is free.
func TestLeaderPassSkipsKeyRowARotationHolds(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://acme.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `UPDATE api_keys SET webhook_previous_until = now() - interval '1 second' WHERE owner = 'acme'`)
	b.exec(t, `UPDATE webhook_owners SET previous_until = now() - interval '1 second' WHERE owner = 'acme'`)

	// A rotation's first step: the owner's newest hooked key, locked.
	rotation, pid := b.hold(t, `SELECT id FROM api_keys WHERE owner = 'acme' FOR UPDATE`)
	done := make(chan error, 1)
	go func() { _, err := b.st.ExpireRemovedWebhooks(guard); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-b.blockedBy(guard, t, pid):
		// The rotation goes on, to the owners' webhooks the pass holds.
		_, lerr := rotation.Exec(guard, `LOCK TABLE webhook_owners IN SHARE ROW EXCLUSIVE MODE`)
		_ = rotation.Rollback(ctx)
		t.Fatalf("the leader's pass waited for the key row a rotation holds: a deadlock once the rotation asks for the owners' webhooks, "+
			"which PostgreSQL breaks by aborting one (the rotation's lock got %v; the pass, which inTx retries, %v)", lerr, <-done)
	}
	if err != nil {
		t.Fatalf("leader's pass with a key row held: %v", err)
	}
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE previous_secret IS NOT NULL`); n != 0 {
		t.Errorf("webhook_owners still holds %d ended overlap secret(s)", n)
	}
	if err := rotation.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireRemovedWebhooks(guard); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM api_keys WHERE webhook_previous_secret IS NOT NULL`); n != 0 {
		t.Errorf("api_keys still holds %d ended overlap secret(s) after the next pass, with the row free", n)
	}
}

// blockedBy returns a channel closed once some backend waits for a lock the
// backend pid holds (a condition, polled until ctx ends).
func (b *bundle) blockedBy(ctx context.Context, t *testing.T, pid int) <-chan struct{} {
	t.Helper()
	ch := make(chan struct{})
	go func() {
		for ctx.Err() == nil {
			var n int
			if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`, pid).Scan(&n); err == nil && n > 0 {
				close(ch)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return ch
}
