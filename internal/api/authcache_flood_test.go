package api_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// countingKeys knows one key, "tenant-key", and counts lookups of it.
type countingKeys struct{ tenantLookups atomic.Int64 }

func (c *countingKeys) Owner(_ context.Context, key string) (string, bool, error) {
	if key == "tenant-key" {
		c.tenantLookups.Add(1)
		return "acme", true, nil
	}
	return "", false, nil
}

// A flood of unknown keys (random guesses, a misconfigured client) fills the
// cache with misses: the tenants' keys stay cached, so the flood does not send
// every tenant request to the database. (Before, a full cache emptied itself
// whole, hits included.)
func TestCachedAuthKeepsTenantKeysThroughAFloodOfUnknownKeys(t *testing.T) {
	keys := &countingKeys{}
	c := &api.CachedAuth{Next: keys, TTL: time.Hour, Max: 8}
	ctx := context.Background()
	if _, ok, _ := c.Owner(ctx, "tenant-key"); !ok {
		t.Fatal("the tenant's key is refused")
	}
	for i := range 100 {
		if _, ok, _ := c.Owner(ctx, fmt.Sprintf("guess-%d", i)); ok {
			t.Fatal("an unknown key is accepted")
		}
		if _, ok, _ := c.Owner(ctx, "tenant-key"); !ok {
			t.Fatal("the tenant's key is refused")
		}
	}
	if n := keys.tenantLookups.Load(); n != 1 {
		t.Fatalf("the tenant's key was looked up %d times during the flood, want once (cached)", n)
	}
}
