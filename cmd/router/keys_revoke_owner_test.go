package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A revocation is for good and keyed by a small integer: `keys revoke` names
// whose key it revoked (owner and prefix, as `keys list` shows them), so a
// mistyped ID is seen at once. It said only "revoked key 5".
func TestKeysRevokeNamesOwnerAndPrefix(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	for _, args := range [][]string{nil, {"--no-wait"}} {
		k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme-eu"})
		if err != nil {
			t.Fatal(err)
		}
		keys, err := db.Store.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("owner acme-eu, prefix %s…", keys[len(keys)-1].Prefix)
		for _, run := range []string{"first", "again"} {
			stdout, _ := captureOutput(t, func() {
				if err := runKeys(ctx, append([]string{"revoke", fmt.Sprint(k.ID), "--config", cfg}, args...)); err != nil {
					t.Fatal(err)
				}
			})
			if !strings.Contains(stdout, want) {
				t.Errorf("keys revoke %d %v (%s run): stdout %q; want it to name %q", k.ID, args, run, stdout, want)
			}
		}
	}
}
