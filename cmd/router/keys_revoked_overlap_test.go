package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A revoked key's webhook rotation overlap is over: `router keys list` shows
// none ("-" under PREVIOUS SECRET UNTIL), and the replaced secret is not kept
// at rest. Found by review.
func TestKeysListShowsNoOverlapForARevokedKey(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://hooks.example.com/a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Store.RotateWebhookSecret(ctx, "acme", 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{"keys", "list", "--config", cfg}) })
	if code != 0 {
		t.Fatalf("keys list: exit code %d, stderr %q", code, stderr)
	}
	var row []string
	for line := range strings.Lines(stdout) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == strconv.FormatInt(k.ID, 10) {
			row = f
		}
	}
	if len(row) == 0 || row[len(row)-1] != "-" || row[4] == "-" {
		t.Fatalf("keys list:\n%s\nwant key %d revoked, with - under PREVIOUS SECRET UNTIL", stdout, k.ID)
	}
	var previousKept bool
	if err := db.Pool.QueryRow(ctx, `SELECT webhook_previous_secret IS NOT NULL OR webhook_previous_until IS NOT NULL FROM api_keys WHERE id = $1`,
		k.ID).Scan(&previousKept); err != nil || previousKept {
		t.Fatalf("the revoked key's previous webhook secret is still stored (%v)", err)
	}
}
