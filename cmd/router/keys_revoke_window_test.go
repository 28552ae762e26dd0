package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Revoking the owner's last key with a webhook keeps the owner's webhook row
// marked removed for the redelivery window of the command's configuration
// (webhooks.retry_for + backoff_cap + its Retry-After spread + timeout + 15 s + config.RedeliveryMargin), so the events of its jobs
// ending meanwhile are written; `router keys revoke` says until when, and
// what becomes of those events. It said the events were "not delivered until
// it has one again", though the jobs ending in that gap got no event at all.
func TestKeysRevokeSaysHowLongTheOwnersEventsAreKept(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("webhooks: {retry_for: 48h, backoff_cap: 30m, timeout: 5s}\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://hooks.example.com/acme"})
	if err != nil {
		t.Fatal(err)
	}
	_, stderr := captureOutput(t, func() {
		err = runKeys(ctx, []string{"revoke", fmt.Sprint(k.ID), "--no-wait", "--config", cfg})
	})
	if err != nil {
		t.Fatal(err)
	}
	var until time.Time
	if err := db.Pool.QueryRow(ctx, `SELECT removed_until FROM webhook_owners WHERE owner = 'acme' AND url IS NULL`).Scan(&until); err != nil {
		t.Fatalf("acme's webhook row is not marked removed after its last hooked key's revocation: %v", err)
	}
	for _, want := range []string{
		"owner acme now has no webhook",
		"jobs that end in the next 48h37m50s (until " + until.UTC().Format(time.RFC3339) + ";",
		"retried until it is webhooks.retry_for (48h0m0s) old",
		"and 7m0s for what a retry that came due may still wait",
		"delivered if the owner has a webhook again by then, abandoned if not",
		"router keys create --owner acme --webhook-url URL",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("keys revoke's warning:\n%s\nwant it to say %q", stderr, want)
		}
	}
}
