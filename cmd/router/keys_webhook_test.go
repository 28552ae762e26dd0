package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An owner's webhook made with `router keys create --webhook-url` lives on the
// key: revoking that key (rotating it) takes the owner's webhook away, or
// brings back an older key's URL and signing secret. `router keys revoke`
// says so, rather than leaving the operator to find out from undelivered
// events.
func TestKeysRevokeSaysWhatBecameOfTheOwnersWebhook(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	create := func(args ...string) int64 {
		t.Helper()
		if err := runKeys(ctx, append([]string{"create", "--config", cfg}, args...)); err != nil {
			t.Fatal(err)
		}
		keys, err := db.Store.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return keys[len(keys)-1].ID
	}
	revoke := func(id int64) string {
		t.Helper()
		var err error
		_, stderr := captureOutput(t, func() { err = runKeys(ctx, []string{"revoke", fmt.Sprint(id), "--config", cfg}) })
		if err != nil {
			t.Fatal(err)
		}
		return stderr
	}
	var old, hooked int64
	captureOutput(t, func() {
		old = create("--owner", "acme", "--webhook-url", "https://old.example.com/hook")
		hooked = create("--owner", "acme", "--webhook-url", "https://new.example.com/hook")
		create("--owner", "acme") // the rotated key, made without a webhook
		create("--owner", "globex")
	})
	if msg := revoke(hooked); !strings.Contains(msg, "https://old.example.com/hook") || !strings.Contains(msg, "secret") {
		t.Fatalf("revoking the key that carried acme's webhook brought back an older key's webhook without a word: %q", msg)
	}
	if msg := revoke(old); !strings.Contains(msg, "no webhook") || !strings.Contains(msg, "--webhook-url") {
		t.Fatalf("revoking the last key with acme's webhook removed it without a word: %q", msg)
	}
	keys, _ := db.Store.ListAPIKeys(ctx)
	if msg := revoke(keys[3].ID); msg != "" { // globex never had a webhook
		t.Fatalf("a revocation that changed no webhook: %q", msg)
	}
}
