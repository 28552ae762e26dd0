package api

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// CachedAuth caches another Authenticator's answers, hits and misses alike,
// for TTL: a replica asks the database about a key at most once per TTL. A
// key revoked in the database is forgotten as soon as the revocation's
// notification arrives (Evict, wired to the store's Listener), and the whole
// cache when notifications may have been missed (Clear); TTL bounds how long
// a revoked key is still accepted when a notification is lost. A key's
// creation is announced the same way: `router keys create` prints the key
// before its commit, and a miss cached by a lookup made meanwhile would
// refuse the stored key for TTL; other misses stay cached. Lookup errors are
// not cached. TTL 0 disables the cache.
type CachedAuth struct {
	Next Authenticator
	TTL  time.Duration
	// Now is the clock (tests inject one); default time.Now.
	Now func() time.Time
	// Max bounds the entries (default 10000); a full cache drops its expired
	// entries, then its misses, so random keys cannot grow it without bound
	// nor push the tenants' keys out (every request would then ask the
	// database); a miss that finds it full of hits is not kept, and only
	// more hits than Max empty it.
	Max int

	mu sync.Mutex
	m  map[[32]byte]authEntry
	// gen counts evictions: a lookup that started before one does not
	// cache its answer, which may predate the revocation.
	gen uint64
	// evicted is closed, and replaced, at the next eviction (Evicted).
	evicted chan struct{}
}

// Evict forgets the answer cached for the key whose SHA-256 is hash (the
// store's HashAPIKey): a revoked key, or a key just created, is looked up
// again on its next request.
func (c *CachedAuth) Evict(hash [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, hash)
	c.evictedLocked()
}

// Clear forgets every cached answer: revocations may have been missed.
func (c *CachedAuth) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.evictedLocked()
}

func (c *CachedAuth) evictedLocked() {
	c.gen++
	if c.evicted != nil {
		close(c.evicted)
		c.evicted = nil
	}
}

// Evicted returns a channel closed at the next Evict or Clear (tests wait on
// it).
func (c *CachedAuth) Evicted() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.evicted == nil {
		c.evicted = make(chan struct{})
	}
	return c.evicted
}

type authEntry struct {
	owner   string
	ok      bool
	asked   time.Time // when the lookup that answered started
	expires time.Time
}

var _ Authenticator = (*CachedAuth)(nil)

// NewCachedAuth wraps next with a cache of ttl.
func NewCachedAuth(next Authenticator, ttl time.Duration) *CachedAuth {
	return &CachedAuth{Next: next, TTL: ttl}
}

// Owner implements Authenticator.
func (c *CachedAuth) Owner(ctx context.Context, key string) (string, bool, error) {
	if c.TTL <= 0 {
		return c.Next.Owner(ctx, key)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	h := sha256.Sum256([]byte(key)) // the cache never holds keys themselves
	c.mu.Lock()
	e, hit := c.m[h]
	gen := c.gen
	c.mu.Unlock()
	if hit && now().Before(e.expires) {
		return e.owner, e.ok, nil
	}
	// The answer is as old as the lookup's start: a key revoked while the
	// lookup was on its way (a busy pool, a slow database) must be refused
	// within TTL of its revocation, so the entry expires TTL after the start,
	// not after the answer arrived.
	asked := now()
	owner, ok, err := c.Next.Owner(ctx, key)
	if err != nil {
		return "", false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		// A key was evicted while the lookup was on its way: its answer
		// may predate that key's revocation, so it is not kept.
		return owner, ok, nil
	}
	if prev, found := c.m[h]; found && prev.asked.After(asked) {
		// A lookup that started later answered first: its answer is the
		// newer one (a key this replica saw revoked stays refused).
		return owner, ok, nil
	}
	max := c.Max
	if max <= 0 {
		max = 10000
	}
	if c.m == nil {
		c.m = map[[32]byte]authEntry{}
	}
	if len(c.m) >= max {
		t := now()
		for k, v := range c.m {
			if !t.Before(v.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= max {
			for k, v := range c.m {
				if !v.ok {
					delete(c.m, k)
				}
			}
		}
		if len(c.m) >= max {
			if !ok {
				return owner, ok, nil // the tenants' keys stay; this miss is asked again
			}
			clear(c.m)
		}
	}
	c.m[h] = authEntry{owner: owner, ok: ok, asked: asked, expires: asked.Add(c.TTL)}
	return owner, ok, nil
}

// LongestKey is the wrapped Authenticator's (0 when it cannot say).
func (c *CachedAuth) LongestKey() int {
	if l, ok := c.Next.(keyLengths); ok {
		return l.LongestKey()
	}
	return 0
}
