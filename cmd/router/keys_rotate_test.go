package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router keys rotate-webhook-secret` gives the owner's stored-key webhook a
// new secret, printed once on stdout (what to do on stderr), and keeps the
// replaced one signing for the overlap (24h by default), which `router keys
// list` shows.
func TestKeysRotateWebhookSecret(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	captureOutput(t, func() {
		if err := runKeys(ctx, []string{"create", "--owner", "acme", "--webhook-url", "https://hooks.example.com/r", "--config", cfg}); err != nil {
			t.Error(err)
		}
	})
	before, err := db.Store.WebhookFor(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{"keys", "rotate-webhook-secret", "--owner", "acme", "--config", cfg}) })
	if code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	secret := strings.TrimSuffix(stdout, "\n")
	if !strings.HasPrefix(secret, "whsec_") || strings.Contains(secret, "\n") || secret == before.Secret {
		t.Fatalf("stdout %q, want the new whsec_ secret alone", stdout)
	}
	if !strings.Contains(stderr, "shown once") || !strings.Contains(stderr, "give the receiver the new secret") || strings.Contains(stderr, secret) {
		t.Fatalf("stderr %q, want what to do, without the secret", stderr)
	}
	want := store.Webhook{URL: "https://hooks.example.com/r", Secret: secret, PreviousSecret: before.Secret}
	if w, err := db.Store.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after the rotation: %+v (%v), want %+v", w, err, want)
	}
	var defaultOverlap bool
	if err := db.Pool.QueryRow(ctx, `SELECT previous_until = updated_at + interval '24 hours' FROM webhook_owners WHERE owner = 'acme'`).Scan(&defaultOverlap); err != nil || !defaultOverlap {
		t.Fatalf("the default overlap is not 24h (%v)", err)
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].WebhookPreviousUntil == nil {
		t.Fatalf("keys %+v (%v), want acme's listing its overlap", keys, err)
	}
	until := keys[0].WebhookPreviousUntil.UTC().Format(time.RFC3339)
	if !strings.Contains(stderr, until) {
		t.Fatalf("stderr %q does not say until when the replaced secret signs (%s)", stderr, until)
	}
	stdout, _ = captureOutput(t, func() { code = run(ctx, []string{"keys", "list", "--config", cfg}) })
	if code != 0 || !strings.Contains(stdout, "PREVIOUS SECRET UNTIL") || !strings.Contains(stdout, until) {
		t.Fatalf("keys list (exit code %d):\n%s\nwant the running overlap, until %s", code, stdout, until)
	}

	stdout, stderr = captureOutput(t, func() {
		code = run(ctx, []string{"keys", "rotate-webhook-secret", "--owner", "acme", "--overlap", "1h", "--config", cfg})
	})
	again := strings.TrimSuffix(stdout, "\n")
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, until) {
		t.Fatalf("a rotation during the overlap: exit code %d, stderr %q; want a warning that the overlap until %s was cut short", code, stderr, until)
	}
	want = store.Webhook{URL: "https://hooks.example.com/r", Secret: again, PreviousSecret: secret}
	if w, err := db.Store.WebhookFor(ctx, "acme"); err != nil || w != want {
		t.Fatalf("after a second rotation: %+v (%v), want %+v", w, err, want)
	}
}

// What cannot be rotated is refused, saying why and what to do, with nothing
// changed: a bad command line (exit 2), and an owner without a stored key's
// webhook or whose webhook the configuration sets (exit 1, as the other keys
// subcommands' refusals).
func TestKeysRotateWebhookSecretRefusals(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("KEYS_TEST_KEY", "configured-key-0123456789")
	t.Setenv("KEYS_TEST_SECRET", "a-signing-secret-of-32-bytes-ok!")
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	if err := appendFile(cfg, "api_keys:\n  - {owner: acme, key_env: KEYS_TEST_KEY, webhook: {url: \"https://cfg.example.com/hook\", secret_env: KEYS_TEST_SECRET}}\n"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// acme's stored key has a webhook too, which the configuration's
	// overrides (made before the configured one); initech's webhook is one
	// a running router's configuration set; globex's key has none.
	for _, k := range []store.NewAPIKey{
		{Owner: "acme", WebhookURL: "https://stored.example.com/hook"},
		{Owner: "initech", WebhookURL: "https://stored.example.com/initech"},
		{Owner: "globex"},
	} {
		if _, err := db.Store.CreateAPIKeyWith(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"initech": "https://served.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{}, 2, []string{"--owner is required"}},
		{[]string{"--owner", "globex", "--overlap", "0s"}, 2, []string{"--overlap 0s", "more than 0", "720h"}},
		{[]string{"--owner", "globex", "--overlap", "-1h"}, 2, []string{"--overlap -1h", "more than 0"}},
		{[]string{"--owner", "globex", "--overlap", "721h"}, 2, []string{"--overlap 721h", "at most 720h"}},
		{[]string{"--owner", "globex", "--overlap", "7d"}, 2, []string{`invalid value "7d"`, "days are not a unit"}},
		{[]string{"--owner", "globex", "extra"}, 2, []string{"unexpected argument"}},
		{[]string{"--owner", "acme", "--help"}, 0, []string{"Usage: router keys rotate-webhook-secret", "--overlap", "(default 24h)"}},
		{[]string{"--owner", "globex"}, 1, []string{`"globex" has no webhook from a stored key`, "router keys create --owner globex --webhook-url"}},
		{[]string{"--owner", "nobody"}, 1, []string{`"nobody" has no webhook from a stored key`}},
		{[]string{"--owner", "acme"}, 1, []string{"https://cfg.example.com/hook", "previous_secret_env"}},
		{[]string{"--owner", "initech"}, 1, []string{"https://served.example.com/hook", "previous_secret_env"}},
	} {
		args := append([]string{"keys", "rotate-webhook-secret", "--config", cfg}, c.args...)
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, args) })
		// The help asked for is on stdout; anything else says on stderr why
		// nothing changed, and prints nothing on stdout.
		said, quiet := stderr, stdout
		if c.code == 0 {
			said, quiet = stdout, stderr
		}
		ok := code == c.code && quiet == ""
		for _, w := range c.want {
			ok = ok && strings.Contains(said, w)
		}
		if !ok {
			t.Errorf("router %s: exit code %d, stdout %q, stderr %q; want exit code %d saying %q",
				strings.Join(args, " "), code, stdout, stderr, c.code, c.want)
		}
	}
	if n, err := countRows(ctx, db, `SELECT count(*) FROM api_keys WHERE webhook_previous_secret IS NOT NULL`); err != nil || n != 0 {
		t.Fatalf("%d keys rotated by refused commands (%v)", n, err)
	}
}

func countRows(ctx context.Context, db *testdb.DB, q string) (int, error) {
	var n int
	err := db.Pool.QueryRow(ctx, q).Scan(&n)
	return n, err
}
