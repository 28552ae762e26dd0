package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A rotation of an owner whose webhook a running router's configuration sets
// (synced into webhook_owners) would print a secret that signs nothing: it is
// refused inside its transaction, and nothing changes — whatever the CLI
// checked before.
func TestRotationRefusedWhenTheConfigurationSetsTheWebhook(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://acme.example.com/stored"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://acme.example.com/configured"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.RotateWebhookSecret(ctx, "acme", time.Hour); !errors.Is(err, store.ErrWebhookElsewhere) {
		t.Fatalf("rotate: %v, want ErrWebhookElsewhere", err)
	}
	var secret string
	var prev *string
	if err := b.db.Pool.QueryRow(ctx, `SELECT webhook_secret, webhook_previous_secret FROM api_keys WHERE owner = 'acme'`).Scan(&secret, &prev); err != nil {
		t.Fatal(err)
	}
	if secret != k.WebhookSecret || prev != nil {
		t.Fatalf("the refused rotation changed the key: secret changed %v, previous %v", secret != k.WebhookSecret, prev)
	}
}

// A configured webhook never carries a stored key's previous secret, and a
// previous secret whose overlap has ended is not kept at rest: the next
// rebuild clears it.
func TestRebuildsClearPreviousSecretsTheyNoLongerUse(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://acme.example.com/stored"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "globex", WebhookURL: "https://globex.example.com/stored"}); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{"acme", "globex"} {
		if _, err := b.st.RotateWebhookSecret(ctx, owner, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://acme.example.com/configured"}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM webhook_owners WHERE owner = 'acme' AND (previous_secret IS NOT NULL OR previous_until IS NOT NULL)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the configured webhook keeps a stored key's previous secret (%d rows, %v)", n, err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE api_keys SET webhook_previous_until = now() - interval '1 second' WHERE owner = 'globex'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "initech", WebhookURL: "https://initech.example.com/h"}); err != nil { // any rebuild
		t.Fatal(err)
	}
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE owner = 'globex' AND webhook_previous_secret IS NOT NULL`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("an ended overlap's secret is still stored (%d, %v)", n, err)
	}
}
