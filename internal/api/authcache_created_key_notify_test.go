package api_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// countingAuth counts the lookups that reach the wrapped Authenticator.
type countingAuth struct {
	next    api.Authenticator
	lookups atomic.Int32
}

func (c *countingAuth) Owner(ctx context.Context, key string) (string, bool, error) {
	c.lookups.Add(1)
	return c.next.Owner(ctx, key)
}

// `router keys create` prints the new key before its transaction commits
// (store.NewAPIKey.Show: a key that could not be printed is rolled back). A
// client that uses the key as it is printed may reach a replica before the
// commit: the replica finds no key and caches the miss for auth.cache_ttl
// (an hour here). The creation is announced, committed with it, as a
// revocation is, and the replica's listener drops that miss: once the
// announcement has arrived the stored key is accepted. Other misses stay
// cached. Found by review (rauth9 finding 1).
func TestCreatedKeyDropsCachedMiss(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	lookups := &countingAuth{next: &api.KeyAuth{Store: db.Store}}
	auth := api.NewCachedAuth(lookups, time.Hour)

	// A marker announced after the creation committed: a listener hands
	// announcements over in commit order, so once the marker has arrived
	// the creation's announcement has too, if there was one.
	marker := sha256.Sum256([]byte(rand.Text()))
	markerSeen := make(chan struct{})
	listener := store.NewListener(db.Pool, nil)
	listener.OnAPIKeyRevoked(func(h [32]byte) {
		auth.Evict(h)
		if h == marker {
			close(markerSeen)
		}
	}, auth.Clear)
	lctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); listener.Run(lctx) }()
	t.Cleanup(func() { stop(); <-done })
	guard, cancel := context.WithTimeout(ctx, time.Minute) // a guard against a hang, not a timing assertion
	defer cancel()
	select {
	case <-listener.Ready(): // its first Clear is behind us
	case <-guard.Done():
		t.Fatal("the listener never issued its LISTEN")
	}

	unknown := "rk_" + rand.Text()
	if _, ok, err := auth.Owner(ctx, unknown); err != nil || ok {
		t.Fatalf("an unknown key: ok=%v err=%v", ok, err)
	}
	var key string
	_, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", Show: func(k store.CreatedAPIKey) error {
		key = k.Key
		// The key as it is printed, tried at once: not committed yet.
		if _, ok, err := auth.Owner(ctx, key); err != nil || ok {
			t.Errorf("key looked up before the commit: ok=%v err=%v", ok, err)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `SELECT pg_notify($1, $2)`, store.APIKeyRevokedChannel, hex.EncodeToString(marker[:])); err != nil {
		t.Fatal(err)
	}
	select {
	case <-markerSeen:
	case <-guard.Done():
		t.Fatal("the marker's announcement never reached the listener")
	}
	owner, ok, err := auth.Owner(ctx, key)
	if err != nil || !ok || owner != "acme" {
		t.Fatalf("key stored and its creation's announcement received, but the replica still refuses it from the miss it cached "+
			"before the commit: owner=%q ok=%v err=%v; want acme (every replica accepts a key once `router keys create` has returned)", owner, ok, err)
	}
	before := lookups.lookups.Load()
	if _, ok, err := auth.Owner(ctx, unknown); err != nil || ok {
		t.Fatalf("the unknown key again: ok=%v err=%v", ok, err)
	}
	if n := lookups.lookups.Load() - before; n != 0 {
		t.Fatalf("the unknown key's miss was looked up again (%d lookups) after another key's creation: only the created key's cached answer is to be dropped", n)
	}
}
