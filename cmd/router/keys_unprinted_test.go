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

// closedPipe is a pipe's write end whose reader is gone: a write to it fails
// with EPIPE (it is not fd 1, so no SIGPIPE kills the test).
func closedPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// `router keys revoke` and `router keys forget-removed-webhook` print their
// result after the change is committed. A stdout that cannot be written (a
// full disk) was ignored: the command exited 0 with nothing shown. It now
// says the change was made, naming it, and that its report is lost (exit 1);
// a stdout whose reader is gone still ends it quietly with 141, as any
// one-shot command's. Either way the change stands.
func TestKeysChangeReportedWhenItsOutputCannotBeWritten(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	revoked := func(id int64) bool {
		t.Helper()
		keys, err := db.Store.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.ID == id {
				return k.RevokedAt != nil
			}
		}
		t.Fatalf("key %d is not in keys list", id)
		return false
	}
	for _, wait := range [][]string{{"--no-wait"}, nil} {
		k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{"keys", "revoke", fmt.Sprint(k.ID), "--config", cfg}, wait...)
		var code int
		stderr := withStdout(t, devFull(t), func() { code = run(ctx, args) })
		want := fmt.Sprintf("router keys revoke: the change was made (key %d was revoked", k.ID)
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "could not be written to stdout") ||
			!strings.Contains(stderr, "no space left on device") {
			t.Errorf("%v with stdout on a full disk: exit %d, stderr %q; want 1, %q and why the report is lost", args, code, stderr, want)
		}
		if !revoked(k.ID) {
			t.Errorf("%v: key %d is not revoked", args, k.ID)
		}

		// Already revoked: nothing changed, and it says so on stderr.
		stderr = withStdout(t, devFull(t), func() { code = run(ctx, args) })
		want = fmt.Sprintf("key %d was already revoked", k.ID)
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "nothing changed") {
			t.Errorf("%v again with stdout on a full disk: exit %d, stderr %q; want 1 and %q", args, code, stderr, want)
		}

		k, err = db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		args[2] = fmt.Sprint(k.ID)
		stderr = withStdout(t, closedPipe(t), func() { code = run(ctx, args) })
		if code != 141 || stderr != "" {
			t.Errorf("%v with stdout's reader gone: exit %d, stderr %q; want 141 and nothing said", args, code, stderr)
		}
		if !revoked(k.ID) {
			t.Errorf("%v with stdout's reader gone: key %d is not revoked", args, k.ID)
		}
	}

	// forget-removed-webhook: the owner's key's webhook takes over, said
	// on stderr when stdout cannot be written.
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "hooked", WebhookURL: "https://stored.example.com/hooked"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"hooked": "https://served.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	var code int
	stderr := withStdout(t, devFull(t), func() {
		code = run(ctx, []string{"keys", "forget-removed-webhook", "--config", cfg, "--owner", "hooked"})
	})
	want := fmt.Sprintf("router keys forget-removed-webhook: the change was made (owner hooked's removed configured webhook was forgotten; its events now go to https://stored.example.com/hooked (key %d's webhook))", k.ID)
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("forget-removed-webhook with stdout on a full disk: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	if w, err := db.Store.WebhookFor(ctx, "hooked"); err != nil || w.URL != "https://stored.example.com/hooked" {
		t.Errorf("hooked's webhook after the forget: %+v (%v), want the key's: the change stands", w, err)
	}
}
