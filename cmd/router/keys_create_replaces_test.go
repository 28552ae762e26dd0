package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A second `keys create --webhook-url` for an owner takes over the owner's
// webhook (the newest hooked key's is the owner's): it says so, naming the
// URL the events no longer go to. It used to say nothing.
func TestKeysCreateSaysItReplacedTheOwnersWebhook(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	create := func(url string) string {
		t.Helper()
		_, stderr := captureOutput(t, func() {
			if err := runKeys(ctx, []string{"create", "--config", cfg, "--owner", "acme", "--webhook-url", url}); err != nil {
				t.Fatal(err)
			}
		})
		return stderr
	}
	if stderr := create("https://first.example.com/hook"); strings.Contains(stderr, "warning") {
		t.Errorf("the owner's first webhook: stderr %q; want no warning", stderr)
	}
	stderr := create("https://second.example.com/hook")
	if w, _ := db.Store.WebhookFor(ctx, "acme"); w.URL != "https://second.example.com/hook" {
		t.Fatalf("webhook now %q", w.URL)
	}
	if !strings.Contains(stderr, "no longer to https://first.example.com/hook") || !strings.Contains(stderr, "router keys revoke") {
		t.Errorf("owner acme's events no longer go to https://first.example.com/hook, but create said only: %q", stderr)
	}
	if stderr := create("https://second.example.com/hook"); !strings.Contains(stderr, "now signed with the new secret") {
		t.Errorf("same URL again, a new secret: stderr %q; want a warning that the receiver needs the new secret", stderr)
	}
}
