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
	keys := &fakeKeys{}
	auth := api.NewCachedAuth(keys, time.Hour)
	if !owns(auth, "k") {
		t.Fatal("the key is valid")
	}
	keys.revoked.Store(true)
	if !owns(auth, "k") {
		t.Fatal("the cached answer was not used") // the premise: only eviction refuses it
	}
	evicted := auth.Evicted()
	auth.Evict(sha256.Sum256([]byte("k")))
	<-evicted
	if owns(auth, "k") {
		t.Fatal("the evicted key is still accepted")
	}

	keys.revoked.Store(false)
	auth.Clear()
	keys.during = func() { // read as valid; revoked and evicted before the answer arrives
		keys.during = nil
		keys.revoked.Store(true)
		auth.Evict(sha256.Sum256([]byte("k")))
	}
	if !owns(auth, "k") {
		t.Fatal("the lookup read the key while it was valid")
	}
	if owns(auth, "k") {
		t.Fatal("the answer of a lookup overtaken by an eviction was cached")
	}
}
