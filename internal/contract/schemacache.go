package contract

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"hash/maphash"
	"reflect"
	"regexp"
	"sync"
)

// A chat completion's response_format.json_schema is compiled about three
// times for one job (when the request is checked, when the race builds the
// job's spec, and when an operator's resolution is judged), and callers send
// the same schema with nearly every request. Compiling takes from about a
// millisecond for a small schema to about a second at the bounds, and the
// compiled *Schema is immutable. So CompileRequestSchemaFor keeps what it
// compiled, by a seeded hash of the owner, the SHA-256 of the bytes and the
// name (the name is in the schema's errors and URL), and answers the same
// owner's same bytes with the same *Schema.
//
// Each schema is kept for its owner (tenant) only: one owner's compile never
// answers another's request, nor does another owner wait for it. A cache
// shared by every owner answered a schema any owner had sent at once and a
// new one after a compile, so a tenant could time its own requests to learn
// whether another had recently sent a given schema (its field names, enums,
// a tool catalogue) — the oracle the token-count cache closed the same way
// (internal/tokens/cache.go). A schema compiled for no owner
// (CompileRequestSchema, or an empty owner) is not kept: it would be shared
// by every caller without one.
//
// What it holds is bounded twice: by entries, and by an estimate of the
// memory the compiled schemas hold (see footprint). Schemas within the
// bounds are not all small: 6,000 subschemas hold about 6 MB, and patterns
// are compiled to programs of one instruction per expanded character, so
// 100 patterns of "x{1000}" twenty times over (18 KB of JSON) hold about
// 100 MB. A schema whose estimate is beyond maxCachedEntryBytes is compiled
// on every request, as without the cache; the rest are evicted least
// recently used first. Each owner's share is bounded as well
// (ownerCachedSchemas, ownerCachedBytes): an owner past it loses its own
// least recently used schemas, so one tenant sending many distinct schemas
// evicts at most its share of the others', which then cost one compile each
// again; that is all.
const (
	// maxCachedSchemas is enough for a few hundred callers' schemas; a
	// typical one of 30 properties holds about 35 KB (42 KB estimated),
	// 512 of them 18 MB.
	maxCachedSchemas = 512
	// maxCachedBytes bounds the estimated memory of every schema held.
	maxCachedBytes = 64 << 20
	// maxCachedEntryBytes bounds one schema's: a schema at every bound,
	// MaxSchemaPatternSize too (15.8 MB, 19.3 MB estimated), is held; one
	// of large one-pass patterns ("^\pL{900}$", 7.4 MB each) is not.
	maxCachedEntryBytes = 24 << 20
	// ownerCachedSchemas is one owner's share of the entries, as the token
	// count cache gives each owner an eighth: 64 typical schemas.
	ownerCachedSchemas = maxCachedSchemas / 8
	// ownerCachedBytes is one owner's share of the bytes: one schema's
	// bound rather than an eighth (8 MiB), so that a schema at every bound
	// is still held for its owner. One owner can then hold 3/8 of the
	// bytes, but only a schema near the bounds makes the bytes bind before
	// the entries do (64 typical schemas hold 2.7 MB).
	ownerCachedBytes = maxCachedEntryBytes
)

// requestSchemas is the process-wide cache of CompileRequestSchemaFor.
var requestSchemas = func() *schemaCache {
	c := newSchemaCache(maxCachedSchemas, maxCachedBytes, maxCachedEntryBytes, compileRequestSchema)
	c.ownerEntries, c.ownerBytes = ownerCachedSchemas, ownerCachedBytes
	return c
}()

// CompileRequestSchemaFor is CompileRequestSchema of owner's schema: the
// same owner's same bytes and name give the same *Schema, or the same
// error, without compiling again while they stay in the cache. Another
// owner's compile of the same bytes answers nothing here. An empty owner
// is no owner: its schema is compiled and not kept.
func CompileRequestSchemaFor(owner string, schemaJSON []byte, name string) (*Schema, error) {
	return requestSchemas.getFor(owner, schemaJSON, name)
}

// NewRequestValidatorFor is NewRequestValidator of owner's schema, compiled
// with CompileRequestSchemaFor.
func NewRequestValidatorFor(owner string, schemaJSON []byte, name string, rules Rules) (*Validator, error) {
	s, err := CompileRequestSchemaFor(owner, schemaJSON, name)
	if err != nil {
		return nil, err
	}
	return NewValidatorFromSchema(s, rules)
}

// SchemaCachedFor reports whether owner's schema is in the cache now:
// whether CompileRequestSchemaFor(owner, schemaJSON, name) would answer
// without compiling. It compiles nothing and changes nothing; for tests
// and diagnostics.
func SchemaCachedFor(owner string, schemaJSON []byte, name string) bool {
	return requestSchemas.cached(owner, schemaJSON, name)
}

// schemaKey identifies an owner's schema: the owner, its bytes, and the
// name it was compiled under.
type schemaKey struct {
	owner uint64 // seeded hash of the owner: its name is not kept
	sum   [sha256.Size]byte
	name  string
}

// schemaOutcome is what compiling one schema gave: the schema, or why it
// was refused.
type schemaOutcome struct {
	key    schemaKey
	schema *Schema
	err    error
	size   int64 // estimated bytes held, see outcomeSize
}

// pendingCompile is a compile in progress, which later callers of the same
// schema wait for rather than compile it again.
type pendingCompile struct {
	done   chan struct{} // closed when schema and err are set
	schema *Schema
	err    error
}

// schemaCache holds the outcomes of compiling owners' schemas, least
// recently used evicted first. It is safe for concurrent use.
type schemaCache struct {
	compile                 func(schemaJSON []byte, name string) (*Schema, error)
	seed                    maphash.Seed
	maxEntries              int
	maxBytes, maxEntryBytes int64
	// ownerEntries and ownerBytes bound one owner's share (newSchemaCache
	// sets them to the whole cache).
	ownerEntries int
	ownerBytes   int64

	mu      sync.Mutex                  // guards what follows
	entries map[schemaKey]*list.Element // of *schemaOutcome, in lru
	lru     list.List                   // most recently used first
	bytes   int64                       // the sizes of the outcomes in lru
	owned   map[uint64]ownerShare       // what each owner's outcomes in lru hold
	pending map[schemaKey]*pendingCompile
}

// ownerShare is what one owner's outcomes hold.
type ownerShare struct {
	entries int
	bytes   int64
}

func newSchemaCache(maxEntries int, maxBytes, maxEntryBytes int64, compile func([]byte, string) (*Schema, error)) *schemaCache {
	return &schemaCache{compile: compile, seed: maphash.MakeSeed(), maxEntries: maxEntries, maxBytes: maxBytes, maxEntryBytes: maxEntryBytes,
		ownerEntries: maxEntries, ownerBytes: maxBytes,
		entries: map[schemaKey]*list.Element{}, owned: map[uint64]ownerShare{}, pending: map[schemaKey]*pendingCompile{}}
}

// key is the key of owner's schemaJSON under name.
func (c *schemaCache) key(owner string, schemaJSON []byte, name string) schemaKey {
	return schemaKey{owner: maphash.String(c.seed, owner), sum: sha256.Sum256(schemaJSON), name: name}
}

// cached reports whether owner's outcome for schemaJSON and name is held.
func (c *schemaCache) cached(owner string, schemaJSON []byte, name string) bool {
	if owner == "" {
		return false
	}
	k := c.key(owner, schemaJSON, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[k]
	return ok
}

// get compiles schemaJSON for no owner: nothing is kept, and no compile
// under way is waited for (CompileRequestSchema).
func (c *schemaCache) get(schemaJSON []byte, name string) (*Schema, error) {
	return c.getFor("", schemaJSON, name)
}

// getFor returns what compile gives for owner's schemaJSON and name,
// compiling it once while it stays in the cache. For an empty owner it
// compiles every time.
//
// Refusals are kept like schemas. Most are found after the expensive part:
// the meta-schema check and an external "$ref" are found while compiling,
// and a schema too costly to validate against only after compiling it and
// checking the cost, so a caller resending one would otherwise cost the
// compile on every request. A refusal by the bounds (a *SchemaBoundsError)
// costs one pass over the bytes, about what hashing them costs, and is kept
// too: it holds a few hundred bytes, and a caller sending distinct refused
// schemas evicts no faster than one sending distinct small valid ones.
// Compiling is deterministic (nothing is loaded), so the same bytes would
// be refused again with the same error.
func (c *schemaCache) getFor(owner string, schemaJSON []byte, name string) (*Schema, error) {
	if owner == "" {
		return c.compile(schemaJSON, name)
	}
	k := c.key(owner, schemaJSON, name)
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.lru.MoveToFront(e)
		o := e.Value.(*schemaOutcome)
		c.mu.Unlock()
		return o.schema, o.err
	}
	if p, ok := c.pending[k]; ok {
		c.mu.Unlock()
		// No context: the callers have none to give. This wait ends when
		// the compile that started first does, sooner than compiling here
		// would; without the cache this caller would compile it too. It is
		// the same owner's: the key holds the owner, so no owner waits for
		// (and learns of) another's compile.
		<-p.done
		return p.schema, p.err
	}
	p := &pendingCompile{done: make(chan struct{})}
	c.pending[k] = p
	c.mu.Unlock()

	finished := false
	defer func() {
		if finished {
			return
		}
		// compile panicked: the callers waiting get an error, nothing is
		// kept, and the panic goes on up this caller's stack.
		p.err = fmt.Errorf("schema %s could not be compiled: the compiler failed; send it again", name)
		c.mu.Lock()
		delete(c.pending, k)
		c.mu.Unlock()
		close(p.done)
	}()
	p.schema, p.err = c.compile(schemaJSON, name)
	finished = true

	c.mu.Lock()
	delete(c.pending, k)
	c.add(&schemaOutcome{key: k, schema: p.schema, err: p.err, size: outcomeSize(k, p.schema, p.err)})
	c.mu.Unlock()
	close(p.done)
	return p.schema, p.err
}

// add keeps o unless it alone is beyond maxEntryBytes or an owner's share,
// and evicts least recently used outcomes until the cache is within its
// bounds: first the owner's own while it is past its share, then anyone's.
// c.mu is held.
func (c *schemaCache) add(o *schemaOutcome) {
	if o.size > c.maxEntryBytes || o.size > c.ownerBytes {
		return
	}
	if _, ok := c.entries[o.key]; ok {
		return // kept while this one compiled (cannot happen: pending holds the key)
	}
	c.entries[o.key] = c.lru.PushFront(o)
	c.bytes += o.size
	owner := o.key.owner
	c.owned[owner] = ownerShare{entries: c.owned[owner].entries + 1, bytes: c.owned[owner].bytes + o.size}
	// o fits a share on its own, so this stops before reaching it.
	for sh := c.owned[owner]; sh.entries > c.ownerEntries || sh.bytes > c.ownerBytes; sh = c.owned[owner] {
		c.evict(c.oldestOf(owner))
	}
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.evict(c.lru.Back())
	}
}

// oldestOf is owner's least recently used outcome. It walks the list from
// its end, at most maxEntries elements (microseconds), only when a compile
// (a millisecond or more) just put owner past its share. c.mu is held.
func (c *schemaCache) oldestOf(owner uint64) *list.Element {
	e := c.lru.Back()
	for e.Value.(*schemaOutcome).key.owner != owner {
		e = e.Prev()
	}
	return e
}

// evict drops one outcome. c.mu is held.
func (c *schemaCache) evict(e *list.Element) {
	old := c.lru.Remove(e).(*schemaOutcome)
	delete(c.entries, old.key)
	c.bytes -= old.size
	sh := c.owned[old.key.owner]
	if sh.entries == 1 {
		delete(c.owned, old.key.owner)
		return
	}
	c.owned[old.key.owner] = ownerShare{entries: sh.entries - 1, bytes: sh.bytes - old.size}
}

// The estimate of what a compiled caller's schema holds, from measurements
// of jsonschema v5.3.1 under Go 1.26.8 (heap retained by compiled schemas,
// after a GC, less the same schema without the patterns):
//
//   - about 950 to 1,130 bytes a subschema besides its location (6,000 "{}"
//     under anyOf hold 5.7 MB; a typical 30-property schema 35 KB);
//   - 500 bytes a pattern however small ("a"), its *regexp.Regexp;
//   - 38 to 49 bytes an instruction ("(ab|cd){300}" 38, "x{1000}" 44,
//     1,000 literal characters 49);
//   - 4.1 bytes a rune of a class as written ("\pL" twenty times, unanchored);
//   - for a one-pass program (anchored at both ends, never choosing, under
//     1,000 instructions: "^y{900}$", a UUID, an ISO date; regexp keeps a
//     second program for them) 110 to 134 bytes an instruction, and 6.1 to
//     8 bytes a rune of each copy onePassRunes counts: "^\pL{900}$" holds
//     7.4 MB (8,150 bytes an instruction), "^\pL+$" 28.6 KB.
//
// The constants are those, rounded up: the estimate is 1.07 to 1.49 times
// what the shapes measured hold (a schema at every bound, patterns too, 1.3
// times; more for a schema of long descriptions, which are not kept). An
// outcome estimated too large is only compiled again; one estimated too
// small could hold more than its share.
const (
	footprintPerSubschema  = 1_200 // a jsonschema.Schema, its maps and slices
	footprintPerDocByte    = 2     // names, enum and const values, decoded from the document
	footprintPerRegexp     = 600   // a *regexp.Regexp and its program, besides instructions
	footprintPerRegexpInst = 50
	footprintPerClassRune  = 5 // a range's bounds are 2 runes of 4 bytes
	// A one-pass program's, besides the above: its own instructions, and
	// the copies of class runes (with the slices of where each range goes).
	footprintPerOnePassInst = 90
	footprintPerOnePassRune = 9
	footprintPerOutcome     = 256 // the outcome, its list element and map entry
)

// outcomeSize estimates the bytes an outcome holds.
func outcomeSize(k schemaKey, s *Schema, err error) int64 {
	n := int64(footprintPerOutcome + len(k.name))
	if err != nil {
		n += int64(len(err.Error())) // a meta-schema refusal lists every violation
	}
	if s != nil {
		n += s.footprint
	}
	return n
}

// footprint estimates the bytes a compiled caller's schema holds: each
// subschema with its location, each pattern's program, and the values
// decoded from the document of docLen bytes.
func (g *schemaGraph) footprint(docLen int) int64 {
	n := int64(docLen) * footprintPerDocByte
	for _, s := range g.nodes {
		n += footprintPerSubschema + int64(len(s.Location))
		if s.Pattern != nil {
			n += regexpFootprint(s.Pattern)
		}
		for re := range s.PatternProperties {
			n += regexpFootprint(re)
		}
	}
	return n
}

// regexpFootprint estimates the bytes a compiled pattern holds: its
// program, the ranges of each character class in it (\pL is 3 characters
// and about 700 ranges), and a one-pass program's copies of them. It parses
// the pattern again, in time linear in its length, rather than compiling
// it: "x{1000}" is 7 characters and 1,000 instructions.
func regexpFootprint(re *regexp.Regexp) int64 {
	src := re.String()
	p, err := parsePattern(src)
	if err != nil {
		return int64(len(src)) * footprintPerRegexpInst // it compiled, so it parses
	}
	insts := regexpInsts(p)
	n := footprintPerRegexp + int64(len(src)) + insts*footprintPerRegexpInst + classRuneCap(p)*footprintPerClassRune
	if onePass(re) {
		n += insts*footprintPerOnePassInst + onePassRunes(p)*footprintPerOnePassRune
	}
	return n
}

// onePass reports whether regexp compiled a one-pass program for re, which
// holds far more than re's program alone (see onePassRunes). regexp does
// not say, so this reads its field onepass; were it ever renamed, every
// pattern would be taken for one-pass, an estimate too high, never too low
// (TestOnePassIsFound fails first).
func onePass(re *regexp.Regexp) bool {
	f := reflect.ValueOf(re).Elem().FieldByName("onepass")
	return !f.IsValid() || f.Kind() != reflect.Pointer || !f.IsNil()
}
