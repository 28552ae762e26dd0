package contract

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"reflect"
	"regexp"
	"sync"
)

// A chat completion's response_format.json_schema is compiled about three
// times for one job (when the request is checked, when the race builds the
// job's spec, and when an operator's resolution is judged), and callers send
// the same schema with nearly every request. Compiling takes from about a
// millisecond for a small schema to about a second at the bounds, and the
// compiled *Schema is immutable. So CompileRequestSchema keeps what it
// compiled, by the SHA-256 of the bytes and the name (the name is in the
// schema's errors and URL), and answers the same bytes with the same *Schema.
//
// What it holds is bounded twice: by entries, and by an estimate of the
// memory the compiled schemas hold (see footprint). Schemas within the
// bounds are not all small: 6,000 subschemas hold about 6 MB, and patterns
// are compiled to programs of one instruction per expanded character, so
// 100 patterns of "x{1000}" twenty times over (18 KB of JSON) hold about
// 100 MB. A schema whose estimate is beyond maxCachedEntryBytes is compiled
// on every request, as without the cache; the rest are evicted least
// recently used first. A caller sending distinct schemas can therefore make
// the cache hold at most maxCachedBytes (estimated), and evict other
// callers' schemas, which then cost one compile each again; that is all.
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
)

// requestSchemas is the process-wide cache of CompileRequestSchema.
var requestSchemas = newSchemaCache(maxCachedSchemas, maxCachedBytes, maxCachedEntryBytes, compileRequestSchema)

// schemaKey identifies a caller's schema: its bytes, and the name it was
// compiled under.
type schemaKey struct {
	sum  [sha256.Size]byte
	name string
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

// schemaCache holds the outcomes of compiling schemas, least recently used
// evicted first. It is safe for concurrent use.
type schemaCache struct {
	compile                 func(schemaJSON []byte, name string) (*Schema, error)
	maxEntries              int
	maxBytes, maxEntryBytes int64

	mu      sync.Mutex                  // guards what follows
	entries map[schemaKey]*list.Element // of *schemaOutcome, in lru
	lru     list.List                   // most recently used first
	bytes   int64                       // the sizes of the outcomes in lru
	pending map[schemaKey]*pendingCompile
}

func newSchemaCache(maxEntries int, maxBytes, maxEntryBytes int64, compile func([]byte, string) (*Schema, error)) *schemaCache {
	return &schemaCache{compile: compile, maxEntries: maxEntries, maxBytes: maxBytes, maxEntryBytes: maxEntryBytes,
		entries: map[schemaKey]*list.Element{}, pending: map[schemaKey]*pendingCompile{}}
}

// get returns what compile gives for schemaJSON and name, compiling it once
// while it stays in the cache.
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
func (c *schemaCache) get(schemaJSON []byte, name string) (*Schema, error) {
	k := schemaKey{sum: sha256.Sum256(schemaJSON), name: name}
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
		// would; without the cache this caller would compile it too.
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

// add keeps o unless it alone is beyond maxEntryBytes, and evicts the least
// recently used outcomes until the cache is within its bounds. c.mu is held.
func (c *schemaCache) add(o *schemaOutcome) {
	if o.size > c.maxEntryBytes {
		return
	}
	if _, ok := c.entries[o.key]; ok {
		return // kept while this one compiled (cannot happen: pending holds the key)
	}
	c.entries[o.key] = c.lru.PushFront(o)
	c.bytes += o.size
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		old := c.lru.Remove(c.lru.Back()).(*schemaOutcome)
		delete(c.entries, old.key)
		c.bytes -= old.size
	}
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
