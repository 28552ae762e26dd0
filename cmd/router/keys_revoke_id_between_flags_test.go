package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// docs/operations.md: "`router keys revoke` takes the key id before or after
// its flags". An operator who writes the configuration first, as every other
// command reads (`router keys revoke --config prod.yaml 7 --no-wait`), was
// refused with exit 2 and "unexpected argument \"--no-wait\": it revokes one
// key at a time; give one ID" — a flag taken for a second key id, after the
// one id that was given: Go's flag package stops at the id, and the flags
// after it were never parsed (parseAroundArg parses them in a second pass).
func TestKeysRevokeIDBetweenFlags(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	_, stderr := captureOutput(t, func() {
		runErr = runKeys(ctx, []string{"revoke", "--config", cfg, fmt.Sprint(k.ID), "--no-wait"})
	})
	if runErr != nil {
		t.Fatalf("router keys revoke --config CFG %d --no-wait: %v; stderr %q; want the key revoked", k.ID, runErr, stderr)
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("keys %+v (err %v); want key %d revoked", keys, err, k.ID)
	}
}
