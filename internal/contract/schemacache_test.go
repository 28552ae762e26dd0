package contract

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

const cacheTestName = "response_format.json_schema"

// testOwner is the owner the cache tests compile for: a schema compiled for
// no owner is not kept.
const testOwner = "acme"

// typicalSchema is a caller's schema of 30 properties, a third of them
// strings with a description, a third nullable integers, a third enums;
// tag makes it differ from others.
func typicalSchema(tag string) string {
	props := make([]string, 30)
	for i := range props {
		switch i % 3 {
		case 0:
			props[i] = fmt.Sprintf(`"field_%d":{"type":"string","description":"the %s thing number %d"}`, i, tag, i)
		case 1:
			props[i] = fmt.Sprintf(`"field_%d":{"type":["integer","null"],"minimum":0}`, i)
		default:
			props[i] = fmt.Sprintf(`"field_%d":{"type":"string","enum":["a","b","c"]}`, i)
		}
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":["field_0"],"additionalProperties":false}`
}

// costlySchema compiles, and is then refused: every level of an answer
// nested under "a" applies the definition twice more.
const costlySchema = `{"$ref":"#/$defs/n","$defs":{"n":{"allOf":[{"$ref":"#/$defs/m"},{"$ref":"#/$defs/m"}]},"m":{"properties":{"a":{"$ref":"#/$defs/n"}}}}}`

// countingCache is a cache of the real compile that counts its compiles.
func countingCache(maxEntries int, maxBytes, maxEntryBytes int64) (*schemaCache, *atomic.Int32) {
	var n atomic.Int32
	return newSchemaCache(maxEntries, maxBytes, maxEntryBytes, func(b []byte, name string) (*Schema, error) {
		n.Add(1)
		return compileRequestSchema(b, name)
	}), &n
}

// The same owner's same bytes under the same name give the very schema
// compiled the first time, even from another slice; another name or one
// byte changed give another.
func TestCompileRequestSchemaReturnsTheSchemaCompiledBefore(t *testing.T) {
	schema := typicalSchema("same-pointer")
	first, err := CompileRequestSchemaFor(testOwner, []byte(schema), cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	again, err := CompileRequestSchemaFor(testOwner, []byte(strings.Clone(schema)), cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("the same bytes and name were compiled again (%p, then %p); want the schema compiled the first time", first, again)
	}
	other, err := CompileRequestSchemaFor(testOwner, []byte(schema), "other.name")
	if err != nil {
		t.Fatal(err)
	}
	if other == first || other.URL() != "other.name" {
		t.Errorf("another name gave %p named %q; want a schema of its own, named other.name", other, other.URL())
	}
	changed := strings.Replace(schema, "number 0", "number 9", 1)
	if changed == schema {
		t.Fatal("the test's schema did not change")
	}
	if s, err := CompileRequestSchemaFor(testOwner, []byte(changed), cacheTestName); err != nil || s == first {
		t.Errorf("one byte changed gave %p, %v; want another schema", s, err)
	}
}

// A schema refused after the compile (here by the cost check, the most
// expensive refusal) is refused again with the same error without
// compiling it again; so are the cheap refusals, and the errors still say
// what they are.
func TestSchemaCacheKeepsRefusals(t *testing.T) {
	c, compiles := countingCache(8, 1<<30, 1<<30)
	enum := `"enum":[` + strings.TrimSuffix(strings.Repeat("0,", MaxSchemaEnumValues+1), ",") + `]`
	for name, tc := range map[string]struct {
		schema string
		is     func(error) bool
	}{
		"too costly":     {costlySchema, func(err error) bool { return strings.Contains(err.Error(), "too costly to validate against") }},
		"external ref":   {`{"$ref":"file:///etc/hostname"}`, func(err error) bool { return errors.Is(err, ErrExternalRef) }},
		"beyond a bound": {`{` + enum + `}`, func(err error) bool { var be *SchemaBoundsError; return errors.As(err, &be) }},
		"not JSON":       {`{"type":`, func(err error) bool { return strings.Contains(err.Error(), "is not valid JSON") }},
	} {
		before := compiles.Load()
		_, first := c.getFor(testOwner, []byte(tc.schema), cacheTestName)
		if first == nil || !tc.is(first) {
			t.Errorf("%s: %v, want it refused", name, first)
			continue
		}
		s, again := c.getFor(testOwner, []byte(tc.schema), cacheTestName)
		if s != nil || again != first {
			t.Errorf("%s: sent again, got %p, %v; want the same error, %v", name, s, again, first)
		}
		if n := compiles.Load() - before; n != 1 {
			t.Errorf("%s: compiled %d times for two requests; want once", name, n)
		}
	}
}

// Past maxEntries the least recently used schema is evicted: a schema used
// since it was compiled stays, the other is compiled again.
func TestSchemaCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	c, compiles := countingCache(2, 1<<30, 1<<30)
	get := func(tag string) *Schema {
		t.Helper()
		s, err := c.getFor(testOwner, []byte(typicalSchema(tag)), cacheTestName)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := get("a")
	get("b")
	if get("a") != a { // a is now the most recently used
		t.Fatal("a was compiled again before anything was evicted")
	}
	get("c") // evicts b
	if n := compiles.Load(); n != 3 {
		t.Fatalf("%d compiles for a, b, a, c; want 3", n)
	}
	if get("a") != a {
		t.Error("a, used after b, was evicted; want b evicted")
	}
	if n := compiles.Load(); n != 3 {
		t.Errorf("%d compiles after a again; want still 3", n)
	}
	get("b")
	if n := compiles.Load(); n != 4 {
		t.Errorf("%d compiles after b again; want 4: b was evicted", n)
	}
	checkCacheInvariants(t, c)
}

// The bytes the cache holds (estimated) stay within maxBytes however few
// entries that is, and a schema beyond maxEntryBytes on its own is not
// held at all: it is compiled on every request, as without the cache.
func TestSchemaCacheBoundsTheBytesItHolds(t *testing.T) {
	probe, err := compileRequestSchema([]byte(typicalSchema("t0")), cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	size := outcomeSize(schemaKey{name: cacheTestName}, probe, nil)
	c, compiles := countingCache(100, 2*size+size/2, 1<<30)
	for _, tag := range []string{"t0", "t1", "t2"} {
		if _, err := c.getFor(testOwner, []byte(typicalSchema(tag)), cacheTestName); err != nil {
			t.Fatal(err)
		}
	}
	if c.lru.Len() != 2 || c.bytes > c.maxBytes {
		t.Errorf("holds %d schemas, %d bytes; want 2, at most %d", c.lru.Len(), c.bytes, c.maxBytes)
	}
	if _, err := c.getFor(testOwner, []byte(typicalSchema("t0")), cacheTestName); err != nil || compiles.Load() != 4 {
		t.Errorf("t0 again: %v, %d compiles; want it evicted and compiled again (4)", err, compiles.Load())
	}
	checkCacheInvariants(t, c)

	small, compiles := countingCache(100, 1<<30, size-1)
	for range 2 {
		if _, err := small.getFor(testOwner, []byte(typicalSchema("t0")), cacheTestName); err != nil {
			t.Fatal(err)
		}
	}
	if n := compiles.Load(); n != 2 || small.lru.Len() != 0 {
		t.Errorf("a schema beyond maxEntryBytes: %d compiles for 2 requests, %d held; want 2 and none", n, small.lru.Len())
	}
}

// A pattern counts what it compiles to, not its length: 10 patterns of
// "x{1000}" twenty times over are 1.8 KB of JSON and hold about 9 MB
// compiled, and 4 of "^\pL{900}$" (one-pass programs, a copy of \pL for
// each of 900 instructions) 30 MB, which the process-wide cache never
// holds. A schema at every bound (about 6 MB compiled) is held.
func TestSchemaFootprintCountsWhatPatternsCompileTo(t *testing.T) {
	schemaOf := func(n int, pattern string) *Schema {
		t.Helper()
		var props []string
		for i := range n {
			props = append(props, fmt.Sprintf(`"p%d":{"type":"string","pattern":%q}`, i, pattern))
		}
		// Past the bounds' check, which refuses the largest of these, and
		// the cost check, which refuses patterns of more than
		// MaxSchemaPatternWork instructions (they measure what the cache
		// would hold if a schema got through).
		doc := []byte(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
		s, err := compileSelfContained(doc, cacheTestName, false)
		if err != nil {
			t.Fatal(err)
		}
		s.footprint = newSchemaGraph(s.schema).footprint(len(doc))
		return s
	}
	if got, want := schemaOf(10, strings.Repeat("x{1000}", 20)).footprint, int64(10*20_000*44); got < want {
		t.Errorf("10 patterns of 20,000 instructions each: footprint %d, want at least the %d they were measured to hold", got, want)
	}
	if got := schemaOf(4, `^\pL{900}$`).footprint; got <= maxCachedEntryBytes {
		t.Errorf(`4 one-pass patterns "^\pL{900}$": footprint %d, want more than maxCachedEntryBytes (%d)`, got, maxCachedEntryBytes)
	}
	// Repeating a class repeats its instruction; writing it again repeats
	// its ranges too (\pL has hundreds); in a one-pass program repeating it
	// repeats its ranges as well.
	class, err := syntax.Parse(`\pL`, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	runes := int64(len(class.Rune))
	one := schemaOf(1, `\pL`)
	for p, want := range map[string]int64{
		`\pL{50}`:   49 * footprintPerRegexpInst,
		`\pL\pL`:    runes * footprintPerClassRune,
		`^\pL{50}$`: 49 * runes * footprintPerOnePassRune,
	} {
		if got := schemaOf(1, p).footprint - one.footprint; got < want {
			t.Errorf("%s: footprint %d more than one \\pL's; want at least %d more", p, got, want)
		}
	}
	atBounds, err := CompileRequestSchema([]byte(atBoundsSchema()), cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	if size := outcomeSize(schemaKey{name: cacheTestName}, atBounds, nil); size > maxCachedEntryBytes {
		t.Errorf("a schema at every bound: %d bytes estimated, beyond maxCachedEntryBytes (%d): it would be compiled on every request", size, maxCachedEntryBytes)
	}
}

// Whether regexp compiled a one-pass program is read from a field of
// regexp.Regexp: were it renamed, every pattern would be estimated as
// one-pass, far too high.
func TestOnePassIsFound(t *testing.T) {
	for p, want := range map[string]bool{`^a$`: true, `^[0-9a-f]{8}$`: true, `a`: false, `^x{1000}$`: false, `^a+a$`: false} {
		if got := onePass(regexp.MustCompile(p)); got != want {
			t.Errorf("%s: one-pass %v, want %v", p, got, want)
		}
	}
}

// Callers of a schema that is being compiled wait for that compile rather
// than compile it again, and all get its schema.
func TestSchemaCacheCompilesOnceForConcurrentCallers(t *testing.T) {
	schema := []byte(typicalSchema("concurrent"))
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var compiles atomic.Int32
		c := newSchemaCache(8, 1<<30, 1<<30, func(b []byte, name string) (*Schema, error) {
			compiles.Add(1)
			<-release
			return compileRequestSchema(b, name)
		})
		got := make([]*Schema, 8)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i], _ = c.getFor(testOwner, schema, cacheTestName) })
		}
		synctest.Wait() // every caller is compiling or waiting
		if n := compiles.Load(); n != 1 {
			t.Errorf("%d compiles under way for %d callers of one schema; want 1", n, len(got))
		}
		close(release)
		wg.Wait()
		for i, s := range got {
			if s == nil || s != got[0] {
				t.Errorf("caller %d got %p; want the one compiled schema %p", i, s, got[0])
			}
		}
		checkCacheInvariants(t, c)
	})
}

// A compile that panics wakes the callers waiting for it with an error,
// keeps nothing, and the next request compiles again.
func TestSchemaCacheSurvivesAPanickingCompile(t *testing.T) {
	schema := []byte(typicalSchema("panic"))
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var compiles atomic.Int32
		c := newSchemaCache(8, 1<<30, 1<<30, func(b []byte, name string) (*Schema, error) {
			if compiles.Add(1) == 1 {
				<-release
				panic("compiler bug")
			}
			return compileRequestSchema(b, name)
		})
		var wg sync.WaitGroup
		var recovered any
		wg.Go(func() {
			defer func() { recovered = recover() }()
			_, _ = c.getFor(testOwner, schema, cacheTestName)
		})
		synctest.Wait()
		var waiterErr error
		wg.Go(func() { _, waiterErr = c.getFor(testOwner, schema, cacheTestName) })
		synctest.Wait()
		close(release)
		wg.Wait()
		if recovered != "compiler bug" {
			t.Errorf("the compiling caller recovered %v; want the compiler's panic", recovered)
		}
		if waiterErr == nil || !strings.Contains(waiterErr.Error(), "could not be compiled") {
			t.Errorf("the waiting caller got %v; want an error", waiterErr)
		}
		if s, err := c.getFor(testOwner, schema, cacheTestName); err != nil || s == nil || compiles.Load() != 2 {
			t.Errorf("after the panic: %p, %v, %d compiles; want the schema, compiled a second time", s, err, compiles.Load())
		}
		checkCacheInvariants(t, c)
	})
}

// Many callers of a few schemas, more than the cache holds, each get the
// schema they sent (run with -race).
func TestSchemaCacheConcurrentUse(t *testing.T) {
	c := newSchemaCache(3, 1<<30, 1<<30, compileRequestSchema)
	schemas := make([][]byte, 6)
	for i := range schemas {
		schemas[i] = fmt.Appendf(nil, `{"type":"object","properties":{"k":{"const":%d}},"required":["k"]}`, i)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for j := range 20 {
				i := (g + j) % len(schemas)
				name := fmt.Sprintf("schema%d", i%2)
				s, err := c.getFor(testOwner, schemas[i], name)
				if err != nil {
					t.Error(err)
					return
				}
				if s.URL() != name || s.Check(map[string]any{"k": parsedNumber(i)}) != nil || s.Check(map[string]any{"k": parsedNumber(i + 1)}) == nil {
					t.Errorf("schema %d under %s: got another schema, named %s", i, name, s.URL())
					return
				}
			}
		})
	}
	wg.Wait()
	checkCacheInvariants(t, c)
}

// parsedNumber is n as ParseJSON decodes it.
func parsedNumber(n int) any {
	v, err := ParseJSON([]byte(fmt.Sprint(n)))
	if err != nil {
		panic(err)
	}
	return v
}

// checkCacheInvariants checks that the index, the list and the byte count
// agree, within the bounds, and that nothing is left pending.
func checkCacheInvariants(t *testing.T, c *schemaCache) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var bytes int64
	owned := map[uint64]ownerShare{}
	for e := c.lru.Front(); e != nil; e = e.Next() {
		o := e.Value.(*schemaOutcome)
		if c.entries[o.key] != e {
			t.Errorf("an outcome in the list is not indexed")
		}
		bytes += o.size
		owned[o.key.owner] = ownerShare{entries: owned[o.key.owner].entries + 1, bytes: owned[o.key.owner].bytes + o.size}
	}
	if len(c.entries) != c.lru.Len() || bytes != c.bytes || c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes || len(c.pending) != 0 {
		t.Errorf("%d indexed, %d listed (at most %d), %d bytes counted, %d summed (at most %d), %d pending",
			len(c.entries), c.lru.Len(), c.maxEntries, c.bytes, bytes, c.maxBytes, len(c.pending))
	}
	if len(owned) != len(c.owned) {
		t.Errorf("%d owners listed, %d counted", len(owned), len(c.owned))
	}
	for o, sh := range owned {
		if c.owned[o] != sh || sh.entries > c.ownerEntries || sh.bytes > c.ownerBytes {
			t.Errorf("an owner holds %+v, counted %+v (at most %d entries, %d bytes)", sh, c.owned[o], c.ownerEntries, c.ownerBytes)
		}
	}
}
