package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The tests that revoke a key do not wait auth.cache_ttl each (5s by
// default): TestKeysRevokeWaitsAuthCacheTTL checks the wait itself.
func init() {
	revokeWait = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
}

// `router keys revoke` returns only once auth.cache_ttl (its configuration's)
// has passed since the revocation committed, so that when it says the key is
// refused, a replica that missed the notification no longer accepts it from
// its cache (SPEC §16); --no-wait returns at once. It used to return at once,
// while the key was still accepted for up to auth.cache_ttl.
func TestKeysRevokeWaitsAuthCacheTTL(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	appendConfig(t, cfg, "auth: {cache_ttl: 7s}\n")
	ctx := context.Background()
	var asked []time.Duration
	var revokedWhenAsked []bool
	old := revokeWait
	revokeWait = func(ctx context.Context, d time.Duration) error {
		asked = append(asked, d)
		keys, err := db.Store.ListAPIKeys(ctx)
		revokedWhenAsked = append(revokedWhenAsked, err == nil && len(keys) > 0 && keys[len(keys)-1].RevokedAt != nil)
		return nil
	}
	t.Cleanup(func() { revokeWait = old })

	revoke := func(args ...string) (stdout, stderr string) {
		t.Helper()
		k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		return captureOutput(t, func() {
			if err := runKeys(ctx, append([]string{"revoke", fmt.Sprint(k.ID), "--config", cfg}, args...)); err != nil {
				t.Fatal(err)
			}
		})
	}
	stdout, stderr := revoke()
	if len(asked) != 1 || asked[0] != 7*time.Second || !revokedWhenAsked[0] {
		t.Fatalf("waited %v (revoked when the wait began: %v); want one wait of auth.cache_ttl, 7s, after the revocation", asked, revokedWhenAsked)
	}
	if !strings.Contains(stdout, "waiting auth.cache_ttl (7s") || !strings.Contains(stdout, "every replica refuses key") || stderr != "" {
		t.Errorf("stdout %q, stderr %q; want it to say it waits auth.cache_ttl, then that every replica refuses the key", stdout, stderr)
	}
	stdout, _ = revoke("--no-wait")
	if len(asked) != 1 || !strings.Contains(stdout, "within 7s at most") {
		t.Errorf("--no-wait: waited %v, stdout %q; want no wait, saying replicas refuse it within 7s", asked[1:], stdout)
	}
}
