package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A stored key's webhook secret rotates (`router keys rotate-webhook-secret`):
// the key syncKeyWebhooks picks gets a new secret, and the replaced one is
// the webhook's previous secret until now() + overlap on the database clock —
// through rebuilds of the owners' webhooks — and not after. (Before, the
// only way to change the secret was a new key, and the old one stopped at
// once.)
func TestWebhookForGivesThePreviousSecretUntilTheOverlapEnds(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	older, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://old.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	hooked, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://new.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"}); err != nil { // newer, without a webhook
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w.PreviousSecret != "" {
		t.Fatalf("before any rotation: %+v (%v), want no previous secret", w, err)
	}

	r, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if r.KeyID != hooked.ID || r.URL != "https://new.example.com/hook" || r.CutShort != nil {
		t.Fatalf("rotated %+v, want key %d (the newest unrevoked key with a webhook; %d is older), no overlap cut short", r, hooked.ID, older.ID)
	}
	if !strings.HasPrefix(r.Secret, "whsec_") || r.Secret == hooked.WebhookSecret {
		t.Fatalf("new secret %q, want a new whsec_ secret", r.Secret)
	}
	want := store.Webhook{URL: "https://new.example.com/hook", Secret: r.Secret, PreviousSecret: hooked.WebhookSecret}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after the rotation: %+v (%v), want %+v", w, err, want)
	}
	// The overlap ends an hour after the rotation's transaction, on the
	// database clock (updated_at is that transaction's now()).
	if n := count(t, b, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND previous_until = updated_at + interval '1 hour'`); n != 1 {
		t.Fatal("the previous secret's end is not the rotation's now() plus the overlap")
	}
	keys, err := b.st.ListAPIKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if running := k.WebhookPreviousUntil != nil; running != (k.ID == hooked.ID) || running && !k.WebhookPreviousUntil.Equal(r.PreviousUntil) {
			t.Fatalf("key %d lists its overlap until %v, want %v for key %d only", k.ID, k.WebhookPreviousUntil, r.PreviousUntil, hooked.ID)
		}
	}

	// A rebuild of the owners' webhooks (another owner's key) keeps it.
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "globex", WebhookURL: "https://globex.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after a rebuild of the owners' webhooks: %+v (%v), want %+v", w, err, want)
	}

	// The overlap ends (moved into the past on the database clock): the
	// previous secret is given no more, nor listed, nor brought back by a
	// rebuild.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE api_keys SET webhook_previous_until = now() - interval '1 second' WHERE webhook_previous_until IS NOT NULL;
		UPDATE webhook_owners SET previous_until = now() - interval '1 second' WHERE previous_until IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	want.PreviousSecret = ""
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after the overlap: %+v (%v), want %+v", w, err, want)
	}
	if keys, err := b.st.ListAPIKeys(ctx); err != nil || keys[1].WebhookPreviousUntil != nil {
		t.Fatalf("after the overlap key %d lists one until %v (%v)", hooked.ID, keys[1].WebhookPreviousUntil, err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "initech", WebhookURL: "https://initech.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after the overlap and a rebuild: %+v (%v), want %+v", w, err, want)
	}
}

// A rotation during another's overlap keeps the secret it replaces, and says
// that the older overlap was cut short; an owner without a stored key's
// webhook, or an overlap out of bounds, is refused with nothing changed.
func TestRotateWebhookSecretAgainAndRefusals(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://acme.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.st.RotateWebhookSecret(ctx, "acme", 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if second.CutShort == nil || !second.CutShort.Equal(first.PreviousUntil) {
		t.Fatalf("the second rotation cut short %v, want the first's overlap, until %v", second.CutShort, first.PreviousUntil)
	}
	want := store.Webhook{URL: "https://acme.example.com/hook", Secret: second.Secret, PreviousSecret: first.Secret}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want || w.PreviousSecret == k.WebhookSecret {
		t.Fatalf("after two rotations: %+v (%v), want %+v", w, err, want)
	}

	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "globex"}); err != nil {
		t.Fatal(err)
	}
	revoked, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "initech", WebhookURL: "https://initech.example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.RevokeAPIKey(ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{"globex", "initech", "nobody"} {
		if _, err := b.st.RotateWebhookSecret(ctx, owner, time.Hour); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("rotating %s's webhook secret (no unrevoked key with a webhook): %v, want ErrNotFound", owner, err)
		}
	}
	for _, overlap := range []time.Duration{0, -time.Hour, store.MaxWebhookOverlap + time.Second} {
		if _, err := b.st.RotateWebhookSecret(ctx, "acme", overlap); err == nil || !strings.Contains(err.Error(), "overlap") {
			t.Errorf("overlap %s: %v, want a refusal naming the overlap", overlap, err)
		}
	}
	if w, err := b.st.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after refused rotations: %+v (%v), want %+v", w, err, want)
	}
	if n := count(t, b, `SELECT count(*) FROM api_keys WHERE webhook_previous_secret IS NOT NULL`); n != 1 {
		t.Fatalf("%d keys have a previous secret, want acme's only", n)
	}
}
