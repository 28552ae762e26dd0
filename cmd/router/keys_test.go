package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func TestKeysCreateListRevoke(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	if err := runKeys(ctx, []string{"create", "--owner", "acme", "--webhook-url", "https://hooks.example.com/r", "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].Owner != "acme" || keys[0].WebhookURL == nil {
		t.Fatalf("after create: %+v %v", keys, err)
	}
	if w, err := db.Store.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://hooks.example.com/r" || !strings.HasPrefix(w.Secret, "whsec_") {
		t.Fatalf("webhook: %+v %v", w, err)
	}
	if err := runKeys(ctx, []string{"list", "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	if err := runKeys(ctx, []string{"revoke", fmt.Sprint(keys[0].ID), "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	keys, _ = db.Store.ListAPIKeys(ctx)
	if keys[0].RevokedAt == nil {
		t.Fatal("the key is not revoked")
	}
	if err := runKeys(ctx, []string{"revoke", "424242", "--config", cfg}); err == nil || !strings.Contains(err.Error(), "router keys list") {
		t.Fatalf("revoking an unknown id: %v", err)
	}
	if err := runKeys(ctx, []string{"revoke", "abc", "--config", cfg}); err == nil || !strings.Contains(err.Error(), "not a key ID") {
		t.Fatalf("revoking a non-number: %v", err)
	}
	if err := runKeys(ctx, []string{"create", "--owner", "acme", "--webhook-url", "ftp://x", "--config", cfg}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--webhook-url") {
		t.Fatalf("a bad webhook URL: %v; want a usage error (exit 2) naming --webhook-url", err)
	}
}

// `keys create --owner` refuses a name with white space or control
// characters (exit 2, a bad flag value) before touching the database: it
// broke `keys list`'s columns and reached metrics labels.
func TestKeysCreateRefusesAnOwnerWithWhiteSpace(t *testing.T) {
	for owner, want := range map[string]string{" ": `--owner " " is blank`, "x\ty z": "--owner: the owner"} {
		var code int
		_, stderr := captureOutput(t, func() {
			code = run(context.Background(), []string{"keys", "create", "--owner", owner, "--config", "/nonexistent/router.yaml"})
		})
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("--owner %q: exit %d, stderr %q; want 2 and %q", owner, code, stderr, want)
		}
	}
}
