package api_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// fakeKeys is a key store on a fake clock: a lookup answers as the database
// did when it read the key (revoked or not), and its answer can arrive later
// (a busy pool, a slow database) — in the meantime the test may revoke it.
type fakeKeys struct {
	revoked atomic.Bool
	// during, when set, runs after the key was read and before the answer
	// returns.
	during func()
}

func (f *fakeKeys) Owner(ctx context.Context, key string) (string, bool, error) {
	ok := !f.revoked.Load()
	if f.during != nil {
		f.during()
	}
	if !ok {
		return "", false, nil
	}
	return "acme", true, nil
}

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
	keys := &fakeKeys{}
	const ttl = 5 * time.Second
	var revokedAt time.Time
	keys.during = func() {
		clock.add(time.Second) // the key was read; a second later it is revoked
		keys.revoked.Store(true)
		revokedAt = clock.now()
		clock.add(2 * time.Second) // the answer ("valid") arrives two seconds after that
	}
	auth := &api.CachedAuth{Next: keys, TTL: ttl, Now: clock.now}
	if !owns(auth, "k") {
		t.Fatal("the key was valid when it was read")
	}
	keys.during = nil
	clock.ns.Store(revokedAt.Add(ttl).UnixNano())
	if owns(auth, "k") {
		t.Fatalf("the key is still accepted %s after its revocation (auth.cache_ttl %s)", ttl, ttl)
	}
}

// Once a replica has seen that a key is revoked, an older lookup that answers
// later does not make the replica accept the key again.
func TestCachedAuthKeepsTheNewerAnswer(t *testing.T) {
	clock := newFakeClock()
	keys := &fakeKeys{}
	auth := &api.CachedAuth{Next: keys, TTL: 5 * time.Second, Now: clock.now}
	read, release := make(chan struct{}), make(chan struct{})
	keys.during = func() { close(read); <-release }
	first := make(chan bool)
	go func() { first <- owns(auth, "k") }() // reads "valid", answers late
	<-read
	keys.during = nil
	keys.revoked.Store(true)
	clock.add(time.Second)
	if owns(auth, "k") {
		t.Fatal("a lookup after the revocation accepted the key")
	}
	close(release)
	if !<-first {
		t.Fatal("the first lookup read the key before its revocation")
	}
	clock.add(time.Second)
	if owns(auth, "k") {
		t.Fatal("the key is accepted again after this replica saw it revoked: an older lookup's answer replaced a newer one")
	}
}
