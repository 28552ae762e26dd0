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

// oldSecret is the secret being rotated out in the rotation test.
const oldSecret = "whsec_b2xkLXNlY3JldC1yb3RhdGVkLW91dC0xMjM0NTY="

// A secret rotation (api_keys[].webhook.previous_secret_env): while the old
// secret is configured beside the new one, each delivery carries both
// signatures, so a receiver verifying with either accepts it — and a
// receiver with neither still refuses it. (Before, one secret only: changing
// it failed every delivery until the receiver switched at the same moment.)
func TestRotationSignsWithTheNewAndThePreviousSecret(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusNoContent })
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	if err := db.Store.SyncConfigWebhooks(context.Background(), map[string]string{"acme": rc.srv.URL}); err != nil {
		t.Fatal(err)
	}
	svc := newServiceWith(t, db, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret},
		PreviousSecrets: map[string]string{"acme": oldSecret}})
	e := &env{db: db, st: db.Store, svc: svc}
	e.start(t)
	e.succeed(t, "acme", "k1")
	r := rc.next(t)
	if sigs := strings.Fields(r.header.Get(webhook.HeaderSignature)); len(sigs) != 2 {
		t.Fatalf("webhook-signature %q: want two signatures during a rotation", r.header.Get(webhook.HeaderSignature))
	}
	for name, s := range map[string]string{"new": secret, "previous": oldSecret} {
		if err := webhook.Verify(s, r.header, r.body, time.Now(), 5*time.Minute); err != nil {
			t.Errorf("a receiver verifying with the %s secret refuses the delivery: %v", name, err)
		}
	}
	if err := webhook.Verify("whsec_c29tZS1vdGhlci1zZWNyZXQtbm90LXVzZWQtaGVyZQ==", r.header, r.body, time.Now(), 5*time.Minute); err == nil {
		t.Fatal("a receiver with neither secret accepts the delivery")
	}
}
