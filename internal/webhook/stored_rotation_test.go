package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// A stored key's webhook secret rotation (`router keys
// rotate-webhook-secret`, store.RotateWebhookSecret): during the overlap each
// delivery carries a signature with the new secret and one with the
// replaced secret, so the receiver accepts it whichever it verifies with;
// once the overlap has ended on the database clock, only the new secret
// signs. (Before, a stored key's webhook had one secret: a new one failed
// every delivery until the receiver switched at the same moment.)
func TestStoredKeyRotationSignsWithTheNewAndThePreviousSecret(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusNoContent })
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: rc.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Store.RotateWebhookSecret(ctx, "acme", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	svc := newServiceWith(t, db, webhook.Config{Timeout: 5 * time.Second}) // no configured secrets: the stored key's sign
	e := &env{db: db, st: db.Store, svc: svc}
	e.start(t)
	const other = "whsec_c29tZS1vdGhlci1zZWNyZXQtbm90LXVzZWQtaGVyZQ=="

	e.succeed(t, "acme", "during")
	d := rc.next(t)
	if sigs := strings.Fields(d.header.Get(webhook.HeaderSignature)); len(sigs) != 2 {
		t.Fatalf("webhook-signature %q: want two signatures during the overlap", d.header.Get(webhook.HeaderSignature))
	}
	for name, s := range map[string]string{"new": r.Secret, "previous": k.WebhookSecret} {
		if err := webhook.Verify(s, d.header, d.body, time.Now(), 5*time.Minute); err != nil {
			t.Errorf("during the overlap, a receiver verifying with the %s secret refuses the delivery: %v", name, err)
		}
	}
	if err := webhook.Verify(other, d.header, d.body, time.Now(), 5*time.Minute); err == nil {
		t.Fatal("a receiver with neither secret accepts the delivery")
	}

	// The overlap ends: moved into the past on the database clock.
	if _, err := db.Pool.Exec(ctx, `UPDATE api_keys SET webhook_previous_until = now() - interval '1 second' WHERE webhook_previous_until IS NOT NULL;
		UPDATE webhook_owners SET previous_until = now() - interval '1 second' WHERE previous_until IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	e.succeed(t, "acme", "after")
	d = rc.next(t)
	if sigs := strings.Fields(d.header.Get(webhook.HeaderSignature)); len(sigs) != 1 {
		t.Fatalf("webhook-signature %q: want the new secret's alone after the overlap", d.header.Get(webhook.HeaderSignature))
	}
	if err := webhook.Verify(r.Secret, d.header, d.body, time.Now(), 5*time.Minute); err != nil {
		t.Errorf("after the overlap, a receiver verifying with the new secret refuses the delivery: %v", err)
	}
	if err := webhook.Verify(k.WebhookSecret, d.header, d.body, time.Now(), 5*time.Minute); err == nil {
		t.Error("after the overlap, the replaced secret still signs")
	}
}
