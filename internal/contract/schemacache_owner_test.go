package contract

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// One owner's compile answers that owner only: another owner sending the
// same bytes compiles them again (and gets a schema of its own), then finds
// them in its own part of the cache.
func TestSchemaCacheKeepsEachOwnersSchemasApart(t *testing.T) {
	c, compiles := countingCache(8, 1<<30, 1<<30)
	schema := []byte(typicalSchema("shared-by-two"))
	acme, err := c.getFor("acme", schema, cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	globex, err := c.getFor("globex", schema, cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	if n := compiles.Load(); n != 2 || globex == acme {
		t.Errorf("two owners sent the same schema: %d compiles, globex got acme's schema %v; want 2 compiles and a schema each", n, globex == acme)
	}
	for owner, want := range map[string]*Schema{"acme": acme, "globex": globex} {
		if s, err := c.getFor(owner, schema, cacheTestName); err != nil || s != want {
			t.Errorf("%s again: %p, %v; want its own schema %p", owner, s, err, want)
		}
	}
	if n := compiles.Load(); n != 2 {
		t.Errorf("%d compiles after each owner sent it again; want still 2", n)
	}
	checkCacheInvariants(t, c)
}

// A schema compiled for no owner is not kept: it would be shared by every
// caller that has none.
func TestSchemaCacheKeepsNothingForNoOwner(t *testing.T) {
	c, compiles := countingCache(8, 1<<30, 1<<30)
	schema := []byte(typicalSchema("no-owner"))
	for range 2 {
		if _, err := c.getFor("", schema, cacheTestName); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.get(schema, cacheTestName); err != nil {
		t.Fatal(err)
	}
	if n := compiles.Load(); n != 3 || c.lru.Len() != 0 || c.cached("", schema, cacheTestName) {
		t.Errorf("three requests without an owner: %d compiles, %d kept; want 3 and none", n, c.lru.Len())
	}
}

// An owner does not wait for another owner's compile of the same bytes (it
// would learn, by how long it waited, that the other is compiling them): it
// compiles them itself, at once.
func TestSchemaCacheOwnersDoNotWaitForEachOthersCompile(t *testing.T) {
	schema := []byte(typicalSchema("compiling"))
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var compiles atomic.Int32
		c := newSchemaCache(8, 1<<30, 1<<30, func(b []byte, name string) (*Schema, error) {
			if compiles.Add(1) == 1 {
				<-release // acme's compile, held
			}
			return compileRequestSchema(b, name)
		})
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = c.getFor("acme", schema, cacheTestName) })
		synctest.Wait() // acme's compile is under way
		var globex *Schema
		wg.Go(func() { globex, _ = c.getFor("globex", schema, cacheTestName) })
		synctest.Wait() // globex has compiled, or is blocked waiting for acme's
		if globex == nil || compiles.Load() != 2 {
			t.Errorf("while acme's compile was under way, globex got %p after %d compiles; want its own schema, compiled at once", globex, compiles.Load())
		}
		close(release)
		wg.Wait()
		checkCacheInvariants(t, c)
	})
}

// One owner sending many distinct schemas evicts its own past its share,
// not every other owner's: the others' schemas stay compiled. The share is
// bounded in entries and in bytes.
func TestSchemaCacheBoundsEachOwnersShare(t *testing.T) {
	probe, err := compileRequestSchema([]byte(typicalSchema("p0")), cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	size := outcomeSize(schemaKey{name: cacheTestName}, probe, nil)
	for name, share := range map[string]func(*schemaCache){
		"entries": func(c *schemaCache) { c.ownerEntries = 2 },
		"bytes":   func(c *schemaCache) { c.ownerBytes = 2*size + size/2 },
	} {
		c, compiles := countingCache(8, 8*size+size/2, 1<<30)
		share(c)
		others := map[string][]byte{}
		for _, owner := range []string{"acme", "globex", "initech"} {
			for i := range 2 {
				others[fmt.Sprintf("%s/%d", owner, i)] = []byte(typicalSchema(fmt.Sprintf("%s-%d", owner, i)))
				if _, err := c.getFor(owner, others[fmt.Sprintf("%s/%d", owner, i)], cacheTestName); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i := range 20 {
			if _, err := c.getFor("mallory", []byte(typicalSchema(fmt.Sprintf("mallory-%d", i))), cacheTestName); err != nil {
				t.Fatal(err)
			}
		}
		before := compiles.Load()
		for k, schema := range others {
			owner := k[:len(k)-2]
			if !c.cached(owner, schema, cacheTestName) {
				t.Errorf("%s: %s's schema was evicted by another owner's 20 schemas; want that owner's own evicted", name, k)
			}
		}
		if _, err := c.getFor("mallory", []byte(typicalSchema("mallory-19")), cacheTestName); err != nil || compiles.Load() != before {
			t.Errorf("%s: mallory's latest schema was not kept (%v)", name, err)
		}
		if _, err := c.getFor("mallory", []byte(typicalSchema("mallory-0")), cacheTestName); err != nil || compiles.Load() != before+1 {
			t.Errorf("%s: mallory's first schema was kept past its share (%v)", name, err)
		}
		checkCacheInvariants(t, c)
	}
}

// A schema larger than an owner's share of the bytes is not kept (it would
// evict all of that owner's others and still not fit).
func TestSchemaCacheKeepsNoSchemaBeyondAnOwnersShare(t *testing.T) {
	probe, err := compileRequestSchema([]byte(typicalSchema("p0")), cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	c, compiles := countingCache(8, 1<<30, 1<<30)
	c.ownerBytes = outcomeSize(schemaKey{name: cacheTestName}, probe, nil) - 1
	for range 2 {
		if _, err := c.getFor("acme", []byte(typicalSchema("p0")), cacheTestName); err != nil {
			t.Fatal(err)
		}
	}
	if n := compiles.Load(); n != 2 || c.lru.Len() != 0 {
		t.Errorf("a schema beyond an owner's share: %d compiles for 2 requests, %d held; want 2 and none", n, c.lru.Len())
	}
	// The process-wide cache's share holds a schema at every bound.
	if ownerCachedBytes < maxCachedEntryBytes || ownerCachedSchemas < 1 {
		t.Errorf("an owner's share (%d schemas, %d bytes) is below one schema's bound (%d bytes)", ownerCachedSchemas, ownerCachedBytes, maxCachedEntryBytes)
	}
}
