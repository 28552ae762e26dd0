package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A rotation refused because the owner's configured webhook was marked
// removed by a replica's start (within its window) says that alone: not the
// advice for a configured webhook that is served (previous_secret_env), nor
// the owner twice (rdiff47).
func TestRotateRemovedConfiguredWebhookMessage(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	if _, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "initech", WebhookURL: "https://stored.example.com/initech"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"initech": "https://served.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{}); err != nil { // an older replica starts
		t.Fatal(err)
	}
	var code int
	_, stderr := captureOutput(t, func() {
		code = run(ctx, []string{"keys", "rotate-webhook-secret", "--config", cfg, "--owner", "initech"})
	})
	if code != 1 || strings.Contains(stderr, "previous_secret_env") || strings.Count(stderr, `"initech"`) > 1 ||
		!strings.Contains(stderr, "Nothing was changed") {
		t.Errorf("exit %d, stderr %q: want exit 1 and the removal's message alone, saying nothing was changed", code, stderr)
	}
}
