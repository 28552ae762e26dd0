package main

import (
	"context"
	"fmt"
	"os"
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
	if msg := revoke(old); !strings.Contains(msg, "no webhook") || !strings.Contains(msg, "--webhook-url") || !strings.Contains(msg, "retried until") {
		t.Fatalf("revoking the last key with acme's webhook removed it without a word: %q", msg)
	}
	keys, _ := db.Store.ListAPIKeys(ctx)
	if msg := revoke(keys[3].ID); msg != "" { // globex never had a webhook
		t.Fatalf("a revocation that changed no webhook: %q", msg)
	}
}

// `keys create --webhook-url` for an owner whose webhook the configuration
// sets is refused before anything is stored: the configuration's webhook
// wins, so the new URL would never be called and its printed secret never
// used.
func TestKeysCreateRefusesAWebhookTheConfigurationOverrides(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("KEYS_TEST_KEY", "configured-key-0123456789")
	t.Setenv("KEYS_TEST_SECRET", "a-signing-secret-of-32-bytes-ok!")
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	if err := appendFile(cfg, "api_keys:\n  - {owner: acme, key_env: KEYS_TEST_KEY, webhook: {url: \"https://cfg.example.com/hook\", secret_env: KEYS_TEST_SECRET}}\n"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var err error
	captureOutput(t, func() {
		err = runKeys(ctx, []string{"create", "--config", cfg, "--owner", "acme", "--webhook-url", "https://other.example.com/hook"})
	})
	if err == nil || !strings.Contains(err.Error(), "https://cfg.example.com/hook") || !strings.Contains(err.Error(), "drop --webhook-url") {
		t.Fatalf("err = %v, want a refusal naming the configured webhook", err)
	}
	if keys, lerr := db.Store.ListAPIKeys(ctx); lerr != nil || len(keys) != 0 {
		t.Fatalf("a refused create stored %d keys (%v)", len(keys), lerr)
	}
	captureOutput(t, func() {
		err = runKeys(ctx, []string{"create", "--config", cfg, "--owner", "acme"})
	})
	if err != nil {
		t.Fatalf("a key without --webhook-url for the same owner: %v", err)
	}
	captureOutput(t, func() {
		err = runKeys(ctx, []string{"create", "--config", cfg, "--owner", "globex", "--webhook-url", "https://globex.example.com/hook"})
	})
	if err != nil {
		t.Fatalf("--webhook-url for an owner without a configured webhook: %v", err)
	}
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
