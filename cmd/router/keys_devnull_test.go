package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// devNull is the null device opened for writing, as `>/dev/null` gives it.
func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// `router keys create >/dev/null` stored a valid key that nobody ever saw
// (every write to the null device succeeds); so did rotate-webhook-secret,
// whose new secret then signed deliveries no receiver could verify. Both
// now refuse before touching the database: exit 2, saying why and what to do.
func TestKeysShownOnceRefuseStdoutOnTheNullDevice(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	createHooked(t, ctx, cfg)
	before, err := db.Store.WebhookFor(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"keys", "create", "--owner", "other", "--config", cfg},
		{"keys", "create", "--owner", "other", "--webhook-url", "https://hooks.example.com/o", "--config", cfg},
		{"keys", "rotate-webhook-secret", "--owner", "acme", "--config", cfg},
	} {
		var code int
		stderr := withStdout(t, devNull(t), func() { code = run(ctx, args) })
		if code != 2 || !strings.Contains(stderr, "stdout is "+os.DevNull) || !strings.Contains(stderr, "shown only once") ||
			!strings.Contains(stderr, "redirected to a file") {
			t.Errorf("%v >%s: exit %d, stderr %q; want 2, saying stdout is the null device, the secret is shown once, and to redirect to a file",
				args, os.DevNull, code, stderr)
		}
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].Owner != "acme" || keys[0].WebhookPreviousUntil != nil {
		t.Errorf("keys after the refusals: %+v; want only acme's, with no rotation running", keys)
	}
	if after, err := db.Store.WebhookFor(ctx, "acme"); err != nil || after != before {
		t.Errorf("acme's webhook after the refused rotation: %+v (%v), want it unchanged: %+v", after, err, before)
	}

	// Help asked for with stdout on the null device is still help (exit 0).
	var code int
	withStdout(t, devNull(t), func() { code = run(ctx, []string{"keys", "create", "--help"}) })
	if code != 0 {
		t.Errorf("keys create --help >%s: exit %d, want 0", os.DevNull, code)
	}
}
