package api_test

import (
	"context"
	"crypto/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// countingKeys looks keys up in a test database (api.KeyAuth on the real
// store) and counts the lookups of the tenant's key.
type countingKeys struct {
	auth          *api.KeyAuth
	tenant        string
	tenantLookups atomic.Int64
}

func (c *countingKeys) Owner(ctx context.Context, key string) (string, bool, error) {
	if key == c.tenant {
		c.tenantLookups.Add(1)
	}
	return c.auth.Owner(ctx, key)
}

// A flood of unknown keys (random guesses, a misconfigured client) fills the
// cache with misses: the tenants' keys stay cached, so the flood does not send
// every tenant request to the database. (Before, a full cache emptied itself
// whole, hits included.)
func TestCachedAuthKeepsTenantKeysThroughAFloodOfUnknownKeys(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	keys := &countingKeys{auth: &api.KeyAuth{Store: db.Store}, tenant: k.Key}
	c := &api.CachedAuth{Next: keys, TTL: time.Hour, Max: 8}
	if _, ok, _ := c.Owner(ctx, k.Key); !ok {
		t.Fatal("the tenant's key is refused")
	}
	for range 100 {
		// Guesses of a stored key's shape: each is looked up in the database.
		if _, ok, _ := c.Owner(ctx, "rk_"+rand.Text()); ok {
			t.Fatal("an unknown key is accepted")
		}
		if _, ok, _ := c.Owner(ctx, k.Key); !ok {
			t.Fatal("the tenant's key is refused")
		}
	}
	if n := keys.tenantLookups.Load(); n != 1 {
		t.Fatalf("the tenant's key was looked up %d times during the flood, want once (cached)", n)
	}
}
