package api_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// A revocation's notification evicts the key (Evict, by its SHA-256), and a
// lookup that read the key before the eviction and answers after it is not
// cached: its answer may predate the revocation, and with an hour's TTL it
// would otherwise be accepted for that hour.
func TestCachedAuthEvictionForgetsTheKeyAndALookupInFlight(t *testing.T) {
	keys, key, revoke := newStoredKey(t)
	auth := api.NewCachedAuth(keys, time.Hour)
	if !owns(auth, key) {
		t.Fatal("the key is valid")
	}
	revoke()
	if !owns(auth, key) {
		t.Fatal("the cached answer was not used") // the premise: only eviction refuses it
	}
	evicted := auth.Evicted()
	auth.Evict(sha256.Sum256([]byte(key)))
	<-evicted
	if owns(auth, key) {
		t.Fatal("the evicted key is still accepted")
	}

	keys2, key2, revoke2 := newStoredKey(t)
	auth = api.NewCachedAuth(keys2, time.Hour)
	keys2.setDuring(func() { // read as valid; revoked and evicted before the answer arrives
		keys2.setDuring(nil)
		revoke2()
		auth.Evict(sha256.Sum256([]byte(key2)))
	})
	if !owns(auth, key2) {
		t.Fatal("the lookup read the key while it was valid")
	}
	if owns(auth, key2) {
		t.Fatal("the answer of a lookup overtaken by an eviction was cached")
	}
}
