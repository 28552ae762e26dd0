package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router keys forget-removed-webhook --owner NAME` ends the wait a removed
// configured webhook imposes: the owner's key's webhook takes its events at
// once, and `keys create --webhook-url`, refused before, is accepted. Output
// says what is in force now, and (stderr) that a replica whose configuration
// sets the webhook takes the owner back.
func TestKeysForgetRemovedWebhook(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://stored.example.com/acme"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://served.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{}); err != nil { // removed from the configuration
		t.Fatal(err)
	}
	create := []string{"keys", "create", "--config", cfg, "--owner", "acme", "--webhook-url", "https://new.example.com/acme"}
	var code int
	_, stderr := captureOutput(t, func() { code = run(ctx, create) })
	if code != 1 || !strings.Contains(stderr, "router keys forget-removed-webhook --owner acme") {
		t.Fatalf("keys create --webhook-url within the window: exit %d, stderr %q; want 1 and the refusal naming forget-removed-webhook", code, stderr)
	}

	stdout, stderr := captureOutput(t, func() {
		code = run(ctx, []string{"keys", "forget-removed-webhook", "--config", cfg, "--owner", "acme"})
	})
	want := fmt.Sprintf("owner acme: removed configured webhook forgotten; its events now go to https://stored.example.com/acme (key %d's webhook)\n", k.ID)
	if code != 0 || stdout != want || !strings.Contains(stderr, "takes the owner back when it starts") {
		t.Fatalf("forget: exit %d, stdout %q, stderr %q; want 0, %q and the warning that a replica with the webhook takes it back", code, stdout, stderr, want)
	}
	if w, err := db.Store.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://stored.example.com/acme" {
		t.Fatalf("acme's webhook after the forget: %+v (%v), want the key's", w, err)
	}
	stdout, stderr = captureOutput(t, func() { code = run(ctx, create) })
	if code != 0 || !strings.Contains(stdout, "webhook secret:") {
		t.Fatalf("keys create --webhook-url after the forget: exit %d, stdout %q, stderr %q; want it accepted", code, stdout, stderr)
	}

	// Nothing (left) to forget: exit 1, the command's prefix, nothing changed.
	_, stderr = captureOutput(t, func() {
		code = run(ctx, []string{"keys", "forget-removed-webhook", "--config", cfg, "--owner", "acme"})
	})
	if code != 1 || !strings.Contains(stderr, `router keys forget-removed-webhook: owner "acme" has no removed configured webhook`) ||
		!strings.Contains(stderr, "nothing was changed") {
		t.Fatalf("forget again: exit %d, stderr %q; want 1 and why", code, stderr)
	}
	// No --owner: a usage error.
	_, stderr = captureOutput(t, func() { code = run(ctx, []string{"keys", "forget-removed-webhook", "--config", cfg}) })
	if code != 2 || !strings.Contains(stderr, "router keys forget-removed-webhook: --owner is required") {
		t.Fatalf("no --owner: exit %d, stderr %q; want 2", code, stderr)
	}
}
