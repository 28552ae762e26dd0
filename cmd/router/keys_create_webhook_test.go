package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router keys create --webhook-url` for an owner whose webhook comes from
// the configuration a running router synced (even when the CLI's own
// configuration does not set it) is refused before anything is stored: every
// delivery goes to the configured URL, signed with the configured secret, so
// the printed secret would sign nothing. The message says where the webhook
// comes from and what to do.
func TestKeysCreateWebhookOverriddenByARunningRoutersConfiguration(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	// A replica whose configuration sets acme's webhook has started.
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://cfg.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted") // the operator's CLI config: no api_keys
	var code int
	stdout, stderr := captureOutput(t, func() {
		code = run(ctx, []string{"keys", "create", "--config", cfg, "--owner", "acme", "--webhook-url", "https://new.example.com/hook"})
	})
	w, err := db.Store.WebhookFor(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if code == 0 {
		t.Fatalf("keys create --webhook-url succeeded and printed %q, but acme's events still go to %s (secret from the configuration): the printed secret signs nothing",
			strings.TrimSpace(stdout), w.URL)
	}
	if keys, _ := db.Store.ListAPIKeys(ctx); len(keys) != 0 {
		t.Fatalf("a refused create stored %d keys", len(keys))
	}
	for _, want := range []string{"https://cfg.example.com/hook", "configuration a running router synced", "no key was created", "api_keys[].webhook", "drop --webhook-url"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, stderr)
		}
	}
	if code != 1 || stdout != "" {
		t.Errorf("exit code %d, stdout %q; want 1 and nothing on stdout", code, stdout)
	}
	// A key without a webhook is still fine.
	if err := runKeys(ctx, []string{"create", "--config", cfg, "--owner", "acme"}); err != nil {
		t.Fatalf("keys create without --webhook-url: %v", err)
	}
}
