package config

import (
	"testing"
	"time"
)

// auth.cache_ttl had no upper bound: `cache_ttl: 87600h` (or 5h written for
// 5s) loaded, so a replica that missed a revocation's notification accepted
// the revoked key for that long, and `router keys revoke` waited it. It is at
// most MaxCacheTTL, 1h, which still loads.
func TestCacheTTLAtMostAnHour(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, "auth: {cache_ttl: 87600h}\n", "auth.cache_ttl (87600h0m0s) must be at most 1h0m0s", "router keys revoke", "omit it for the default, 5s")
	mustRefuse(t, "auth: {cache_ttl: 1h0m1s}\n", "auth.cache_ttl (1h0m1s) must be at most 1h0m0s")
	for _, ttl := range []string{"1h", "0s", "5s"} {
		c, err := Parse([]byte("auth: {cache_ttl: " + ttl + "}\n"))
		if err != nil {
			t.Fatalf("auth.cache_ttl %s refused: %v", ttl, err)
		}
		if want, _ := time.ParseDuration(ttl); c.Auth.CacheTTL.D() != want {
			t.Errorf("auth.cache_ttl %s loaded as %s", ttl, c.Auth.CacheTTL.D())
		}
	}
}
