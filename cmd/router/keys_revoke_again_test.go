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

// `router keys revoke ID` promises that once it returns, every replica
// refuses the key (it waits auth.cache_ttl after the revocation). Run again
// on a key revoked a moment ago — by a first run that was stopped during its
// wait, by `--no-wait`, or by a retrying script — it says "already revoked;
// nothing changed" and returns at once with exit 0, although a replica that
// missed the notification may still accept the key for the rest of
// auth.cache_ttl. It should wait what is left of auth.cache_ttl since the
// revocation (revoked_at, on the database clock).
func TestKeysRevokeAgainWaitsRestOfCacheTTL(t *testing.T) {
	db, cfg, asked := revokeAgainSetup(t, "1h") // long enough that the revocation below is well inside it
	ctx := context.Background()

	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	// The first revocation: `--no-wait`, or a run stopped during its wait.
	if _, err := db.Store.RevokeAPIKeyResult(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	stdout, _ := captureOutput(t, func() {
		if err := runKeys(ctx, []string{"revoke", fmt.Sprint(k.ID), "--config", cfg}); err != nil {
			t.Fatal(err)
		}
	})
	if len(*asked) != 1 || (*asked)[0] <= 0 || (*asked)[0] > time.Hour {
		t.Fatalf("second `keys revoke` of a key revoked just now (auth.cache_ttl 1h): waited %v, stdout %q; "+
			"want it to wait the rest of auth.cache_ttl before saying the key is refused everywhere", *asked, stdout)
	}
	if strings.Contains(stdout, "nothing changed") && !strings.Contains(stdout, "refuses") {
		t.Errorf("stdout %q: does not say when every replica refuses the key", stdout)
	}
}

// Run again long after the revocation (more than auth.cache_ttl ago, on the
// database clock), or with --no-wait, `keys revoke` waits nothing and says
// when every replica refuses the key.
func TestKeysRevokeAgainAfterCacheTTLWaitsNothing(t *testing.T) {
	db, cfg, asked := revokeAgainSetup(t, "1h")
	ctx := context.Background()
	revokeAgain := func(args ...string) string {
		t.Helper()
		k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Store.RevokeAPIKeyResult(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if len(args) == 0 { // revoked three hours ago: auth.cache_ttl (1h) and the commit's slack (1h) are over
			if _, err := db.Pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() - interval '3 hours' WHERE id = $1`, k.ID); err != nil {
				t.Fatal(err)
			}
		}
		stdout, _ := captureOutput(t, func() {
			if err := runKeys(ctx, append([]string{"revoke", fmt.Sprint(k.ID), "--config", cfg}, args...)); err != nil {
				t.Fatal(err)
			}
		})
		return stdout
	}
	if out := revokeAgain(); len(*asked) != 0 || !strings.Contains(out, "more than auth.cache_ttl (1h0m0s) ago") || !strings.Contains(out, "every replica refuses it") {
		t.Errorf("revoked 3h ago, auth.cache_ttl 1h: waited %v, stdout %q; want no wait, saying every replica refuses the key", *asked, out)
	}
	if out := revokeAgain("--no-wait"); len(*asked) != 0 || !strings.Contains(out, "within 1h0m0s of the revocation at most") {
		t.Errorf("--no-wait: waited %v, stdout %q; want no wait, saying replicas refuse it within auth.cache_ttl", *asked, out)
	}
}

// revoked_at is stamped inside the revocation's transaction, before its
// COMMIT; a replica that looked the key up while that commit was on its way
// (a synchronous standby, a slow disk; the first run stopped meanwhile)
// caches it as valid for auth.cache_ttl from that lookup, past revoked_at +
// auth.cache_ttl. A run again on a key revoked more than auth.cache_ttl ago,
// but recently, waits auth.cache_ttl whole (it said at once that every
// replica refuses the key; rops14 F1).
func TestKeysRevokeAgainWaitsWholeTTLWhileItsCommitMayBeRecent(t *testing.T) {
	db, cfg, asked := revokeAgainSetup(t, "4s")
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Store.RevokeAPIKeyResult(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	// Stamped 10 s ago, past auth.cache_ttl: its commit may have ended just now.
	if _, err := db.Pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() - interval '10 seconds' WHERE id = $1`, k.ID); err != nil {
		t.Fatal(err)
	}
	stdout, _ := captureOutput(t, func() {
		if err := runKeys(ctx, []string{"revoke", fmt.Sprint(k.ID), "--config", cfg}); err != nil {
			t.Fatal(err)
		}
	})
	if len(*asked) != 1 || (*asked)[0] != 4*time.Second {
		t.Fatalf("`keys revoke` again on a key stamped revoked 10 s ago (auth.cache_ttl 4s): waited %v, stdout %q; "+
			"want auth.cache_ttl whole: a replica counts it from the revocation's commit, which may have ended just now", *asked, stdout)
	}
	if !strings.Contains(stdout, "which is not recorded") {
		t.Errorf("stdout %q does not say why it waits the whole auth.cache_ttl", stdout)
	}
}

// revokeAgainSetup is a database and a configuration with auth.cache_ttl
// ttl for `keys revoke`, whose waits are recorded in *asked, not waited.
func revokeAgainSetup(t *testing.T, ttl string) (*testdb.DB, string, *[]time.Duration) {
	t.Helper()
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	appendConfig(t, cfg, "auth: {cache_ttl: "+ttl+"}\n")
	asked := &[]time.Duration{}
	old := revokeWait
	revokeWait = func(ctx context.Context, d time.Duration) error { *asked = append(*asked, d); return nil }
	t.Cleanup(func() { revokeWait = old })
	return db, cfg, asked
}
