package api_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// storedKeys looks keys up in a test database (api.KeyAuth on the real
// store); during, when set, runs after the database answered and before the
// answer returns (a busy pool, a slow network): in the meantime the test may
// revoke the key in the database.
type storedKeys struct {
	auth   *api.KeyAuth
	during atomic.Pointer[func()]
}

func (k *storedKeys) Owner(ctx context.Context, key string) (string, bool, error) {
	owner, ok, err := k.auth.Owner(ctx, key)
	if f := k.during.Load(); f != nil {
		(*f)()
	}
	return owner, ok, err
}

func (k *storedKeys) setDuring(f func()) {
	if f == nil {
		k.during.Store(nil)
		return
	}
	k.during.Store(&f)
}

// newStoredKey stores a key of acme in a test database and returns the keys
// of that database, the key, and its revocation (in the database).
func newStoredKey(t *testing.T) (keys *storedKeys, key string, revoke func()) {
	t.Helper()
	db := testdb.New(t, store.Options{})
	k, err := db.Store.CreateAPIKeyWith(context.Background(), store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return &storedKeys{auth: &api.KeyAuth{Store: db.Store}}, k.Key, func() {
		if err := db.Store.RevokeAPIKey(context.Background(), k.ID); err != nil {
			t.Error(err)
		}
	}
}

// The clock is the cache's (CachedAuth.Now): the TTL runs on it, so that
// the test moves time without waiting for it.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) add(d time.Duration) { c.ns.Add(int64(d)) }
func newFakeClock() *fakeClock           { c := &fakeClock{}; c.ns.Store(time.Now().UnixNano()); return c }
func owns(a api.Authenticator, key string) bool {
	_, ok, _ := a.Owner(context.Background(), key)
	return ok
}

// docs/api.md: a revoked key is refused by every replica within
// auth.cache_ttl of its revocation — also when the lookup that filled the
// cache was slow and the key was revoked while its answer was on its way.
func TestCachedAuthRefusesARevokedKeyWithinTheTTLAfterASlowLookup(t *testing.T) {
	clock := newFakeClock()
	keys, key, revoke := newStoredKey(t)
	const ttl = 5 * time.Second
	var revokedAt time.Time
	keys.setDuring(func() {
		clock.add(time.Second) // the key was read; a second later it is revoked
		revoke()
		revokedAt = clock.now()
		clock.add(2 * time.Second) // the answer ("valid") arrives two seconds after that
	})
	auth := &api.CachedAuth{Next: keys, TTL: ttl, Now: clock.now}
	if !owns(auth, key) {
		t.Fatal("the key was valid when it was read")
	}
	keys.setDuring(nil)
	clock.ns.Store(revokedAt.Add(ttl).UnixNano())
	if owns(auth, key) {
		t.Fatalf("the key is still accepted %s after its revocation (auth.cache_ttl %s)", ttl, ttl)
	}
}

// Once a replica has seen that a key is revoked, an older lookup that answers
// later does not make the replica accept the key again.
func TestCachedAuthKeepsTheNewerAnswer(t *testing.T) {
	clock := newFakeClock()
	keys, key, revoke := newStoredKey(t)
	auth := &api.CachedAuth{Next: keys, TTL: 5 * time.Second, Now: clock.now}
	read, release := make(chan struct{}), make(chan struct{})
	keys.setDuring(func() { close(read); <-release })
	first := make(chan bool)
	go func() { first <- owns(auth, key) }() // reads "valid", answers late
	<-read
	keys.setDuring(nil)
	revoke()
	clock.add(time.Second)
	if owns(auth, key) {
		t.Fatal("a lookup after the revocation accepted the key")
	}
	close(release)
	if !<-first {
		t.Fatal("the first lookup read the key before its revocation")
	}
	clock.add(time.Second)
	if owns(auth, key) {
		t.Fatal("the key is accepted again after this replica saw it revoked: an older lookup's answer replaced a newer one")
	}
}
