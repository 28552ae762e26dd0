package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What compiling a caller's schema costs grows with its size: validating it
// against its meta-schema and compiling it take about 40 µs a subschema, and
// more per subschema as they grow in number (jsonschema/v5's compiler looks
// for dynamic anchors among every subschema for each one it compiles: it is
// quadratic), longer for long locations, and resolving a reference by anchor
// name or by URL looks through every subschema. A 1 MiB body of
// {"anyOf":[{},{},…]} holds 350,000 subschemas (about half an hour). So a
// schema sent with a request is measured first, in one pass over its JSON, and
// refused beyond the bounds below before the compiler sees it; within them it
// compiles in about a second at most on a small machine. The first
// four are OpenAI's own for structured outputs, so a schema OpenAI accepts is
// within them unless it is large in a way they do not bound (anyOf branches,
// $defs and boolean schemas are not properties; names may be long; anchors and
// URLs may be searched for); the next three bound that, and the last what
// its patterns compile to. Prompts' schemas are the operator's and not
// bounded.
const (
	// MaxSchemaProperties bounds the entries of every "properties" in all.
	MaxSchemaProperties = 5_000
	// MaxSchemaNesting bounds how deep a schema sits below the root, counting
	// one level for each properties, patternProperties, additionalProperties,
	// unevaluatedProperties, items, prefixItems, additionalItems, contains,
	// unevaluatedItems and contentSchema on the way (anyOf, allOf, oneOf,
	// not, if/then/else, $defs and dependentSchemas add none).
	MaxSchemaNesting = 10
	// MaxSchemaChars bounds the characters of all property names,
	// definition names ($defs, definitions), and strings in enum and const
	// values.
	MaxSchemaChars = 120_000
	// MaxSchemaEnumValues bounds the values of every "enum" in all.
	MaxSchemaEnumValues = 1_000
	// MaxSchemaSubschemas bounds the schemas inside the root: every object
	// and every true or false where a schema goes (a property's schema, an
	// anyOf branch, an items, a $defs entry, additionalProperties: false),
	// and every object under a keyword the router does not know or in an
	// enum, const, default or examples value (a "$ref" can point there and
	// the compiler then compiles it as a schema). The maps that properties,
	// patternProperties, $defs, definitions, dependentSchemas and
	// dependencies hold are not schemas and do not count.
	MaxSchemaSubschemas = 6_000
	// MaxSchemaLocation bounds the length of each schema's location: its
	// JSON pointer from the root (/properties/address/anyOf/0), names
	// escaped as the compiler writes them (~ as ~0, / as ~1, then
	// percent-encoded as a URL path segment: "é" is %C3%A9, 6 characters).
	MaxSchemaLocation = 1_000
	// MaxSchemaLookups bounds what the compiler or the validator finds by
	// looking through every subschema: each "$ref" by anchor name
	// ("#node"), by URL or "$id" ("item.json", "https://…"), or from inside
	// a subschema with its own "$id"; each place that is not a schema that
	// a "$ref" points into ("#/components/schemas/a"), once; and each
	// "$dynamicRef", "$dynamicAnchor", "$recursiveRef" and
	// "$recursiveAnchor": true. A "$ref" by JSON pointer to a schema
	// ("#/$defs/a", "#/properties/a/items", "#") is found directly and is
	// not counted.
	MaxSchemaLookups = 100
	// MaxSchemaPatternSize bounds what the regular expressions of every
	// "pattern" and every "patternProperties" name compile to, in all: their
	// instructions plus the runes of their character classes, each
	// occurrence counted (the compiler compiles each). A repetition is that
	// many copies ("x{1000}" is 1,000 instructions, written twenty times 20,020),
	// and a class is its ranges ("\pL" is 1,318 runes, each time it is
	// written; in a pattern anchored at its start, which Go may also compile
	// to a one-pass program giving each class instruction its own copy of
	// the class, each copy: "^\pL{900}$" is about 1.2 million, and holds
	// 7 MB). Compiling a pattern holds about 50 bytes an instruction and
	// 4 to 21 a rune, and takes about 0.2 µs an instruction (Go 1.26), and
	// the compiler compiles each pattern twice (it checks the schema against
	// its meta-schema first). So the bound holds at most about 12 MB and
	// 0.1 s, and a schema at every bound at most about 19 MB; without it 18 KB
	// of "x{1000}" patterns held 98 MB and took 1.8 s. Ordinary patterns are
	// far inside it: an email address, a UUID and an ISO date are 25 to 80
	// each, 500 of them about 25,000; a name in any script,
	// "^[\p{L} '-]+$", is about 2,650 (its class is counted in full, twice
	// as a one-pass program's, though it holds less than half an
	// instruction's bytes a rune), so about 90 of those fit.
	MaxSchemaPatternSize = 250_000
)

// SchemaBoundsError is a caller's schema beyond the bounds above: Problems
// says which, each with the number found and the bound.
type SchemaBoundsError struct {
	Name     string
	Problems []string
}

func (e *SchemaBoundsError) Error() string {
	return fmt.Sprintf("schema %s is beyond the bounds on a schema sent with a request: %s", e.Name, strings.Join(e.Problems, "; "))
}

// SchemaPatternError is a schema (a caller's, or a prompt's: see
// checkKeywords) with a pattern Go's regular expressions cannot parse where
// a schema goes ("pattern", a "patternProperties" name), found before the
// schema is compiled. JSON
// Schema allows ECMA-262 patterns, so lookahead and backreferences are
// valid there but not in Go (RE2); the compiler would only say the pattern
// "is not valid 'regex'", which does not say why or what to do.
type SchemaPatternError struct {
	Name string
	At   string        // the pattern's location: /properties/s/pattern
	Err  *syntax.Error // what regexp/syntax says is wrong with it
}

func (e *SchemaPatternError) Error() string {
	return fmt.Sprintf("schema %s: the pattern at %s cannot be used: %s: `%s`; patterns are Go (RE2) regular expressions: "+
		"no lookahead, lookbehind or backreferences, and repetition counts of at most 1000 — rewrite it, or use \"format\" (date, date-time, email, uuid…) instead of a pattern",
		e.Name, quoteLocation(e.At), e.Err.Code, cutPattern(e.Err.Expr))
}

// cutPattern cuts the part of a pattern an error quotes (for a missing
// parenthesis, all of it) to a length a message can hold.
func cutPattern(s string) string {
	const n = 100
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// schemaBounds measures a schema document against the bounds.
type schemaBounds struct {
	properties, enumValues, chars, subschemas int
	deepest, longest                          int             // the deepest nesting, the longest location
	deepestAt, longestAt                      string          // where each is, the first found
	lookups                                   int             // see MaxSchemaLookups
	otherPlaces                               map[string]bool // places a $ref points into that are not schemas
	patterns, dataPatterns                    patternMeasure  // where a schema goes, and in data (see reachesData)
	reachesData                               bool            // a reference may point into data: it is compiled as a schema
	segs                                      []string        // the location being measured, escaped segments
}

// schemaPlace is where a value of the schema is: its nesting level, the
// length of its location (in schemaBounds.segs), whether it is where a
// schema goes or data (compiled only if a "$ref" points there), and whether
// it is inside a subschema with its own "$id".
type schemaPlace struct {
	level, locLen int
	data, scoped  bool
	inData        bool // data, or anywhere below data
}

// down measures v at the place below p under seg (escaped), a level deeper
// if deeper, where a schema goes unless data.
func (b *schemaBounds) down(v any, p schemaPlace, seg string, deeper, data bool) {
	b.segs = append(b.segs, seg)
	at := schemaPlace{level: p.level + boolInt(deeper), locLen: p.locLen + 1 + len(seg), data: data, scoped: p.scoped, inData: p.inData || data}
	if data {
		b.data(v, at)
	} else {
		b.schema(v, at)
	}
	b.segs = b.segs[:len(b.segs)-1]
}

// loc is the location being measured.
func (b *schemaBounds) loc() string {
	if len(b.segs) == 0 {
		return ""
	}
	return "/" + strings.Join(b.segs, "/")
}

// checkSchemaBounds refuses a schema document beyond the bounds, in one pass
// over it. name says where the schema came from, in errors. A document that
// is not JSON passes: the compiler says what is wrong with it.
func checkSchemaBounds(schemaJSON []byte, name string) error {
	b, ok := measureSchema(schemaJSON)
	if !ok {
		return nil
	}
	return b.check(name)
}

// CheckSchemaBoundsTogether holds several caller schemas that one request
// has compiled (a chat request's strict tools' parameters and its
// response_format schema) to the bounds together, as if they were one: each
// within them alone, a request of many would cost as many times the bounds'
// compile time and memory. name names them in the error; a schema that is
// not JSON is left to its compiler.
func CheckSchemaBoundsTogether(schemas [][]byte, name string) error {
	var all schemaBounds
	for _, s := range schemas {
		if b, ok := measureSchema(s); ok {
			all.add(b)
		}
	}
	return all.check(name)
}

// measureSchema measures a schema document; ok is false for one that is not
// JSON (its compiler says so).
func measureSchema(schemaJSON []byte) (b *schemaBounds, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(schemaJSON))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, false
	}
	b = &schemaBounds{}
	b.schema(doc, schemaPlace{})
	return b, true
}

// add adds what o measured of another document to b's sums.
func (b *schemaBounds) add(o *schemaBounds) {
	b.properties += o.properties
	b.enumValues += o.enumValues
	b.chars += o.chars
	b.subschemas += o.subschemas
	b.lookups += o.lookups + len(o.otherPlaces)
	if o.deepest > b.deepest {
		b.deepest, b.deepestAt = o.deepest, o.deepestAt
	}
	if o.longest > b.longest {
		b.longest, b.longestAt = o.longest, o.longestAt
	}
	patterns := o.patterns
	if o.reachesData {
		patterns.merge(o.dataPatterns)
	}
	b.patterns.merge(patterns)
	if b.patterns.invalid == nil {
		b.patterns.invalid, b.patterns.invalidAt = o.patterns.invalid, o.patterns.invalidAt
	}
}

// check returns a SchemaBoundsError naming what b measured beyond the
// bounds, or a SchemaPatternError for a pattern that does not compile.
func (b *schemaBounds) check(name string) error {
	var problems []string
	if b.properties > MaxSchemaProperties {
		problems = append(problems, fmt.Sprintf("it has %d object properties in all, at most %d are allowed (every entry of every \"properties\" counts)",
			b.properties, MaxSchemaProperties))
	}
	if b.deepest > MaxSchemaNesting {
		problems = append(problems, fmt.Sprintf("%s is nested %d levels deep, at most %d are allowed (each properties, items, additionalProperties, prefixItems, contains and the like on the way is a level)",
			quoteLocation(b.deepestAt), b.deepest, MaxSchemaNesting))
	}
	if b.chars > MaxSchemaChars {
		problems = append(problems, fmt.Sprintf("its property names, definition names, enum values and const values have %d characters in all, at most %d are allowed",
			b.chars, MaxSchemaChars))
	}
	if b.enumValues > MaxSchemaEnumValues {
		problems = append(problems, fmt.Sprintf("its enums have %d values in all, at most %d are allowed", b.enumValues, MaxSchemaEnumValues))
	}
	if b.subschemas > MaxSchemaSubschemas {
		problems = append(problems, fmt.Sprintf("it holds %d subschemas, at most %d are allowed (each property's schema, anyOf, allOf and oneOf branch, items, $defs entry and true or false schema counts; use fewer, or \"type\": [\"string\", \"null\"] rather than anyOf for a nullable value)",
			b.subschemas, MaxSchemaSubschemas))
	}
	if n := b.lookups + len(b.otherPlaces); n > MaxSchemaLookups {
		problems = append(problems, fmt.Sprintf("it has %d references the router must look for (a $ref by anchor name, URL or $id, from inside a subschema with its own $id, "+
			"or into a place that is not a schema; $dynamicRef, $dynamicAnchor, $recursiveRef, $recursiveAnchor), at most %d are allowed "+
			"(refer to definitions by JSON pointer, like \"#/$defs/name\", and give subschemas no $id)", n, MaxSchemaLookups))
	}
	patterns := b.patterns
	if b.reachesData {
		patterns.merge(b.dataPatterns)
	}
	if patterns.tooLargeAt != "" {
		problems = append(problems, fmt.Sprintf("the pattern at %s is too large for Go's regular expressions to compile (%s); its patterns may compile to at most %d instructions and character class runes in all "+
			"(use shorter patterns and smaller repetition counts like {1000}, or \"format\" (date, date-time, email, uuid…) instead of a pattern)",
			quoteLocation(patterns.tooLargeAt), syntax.ErrLarge, MaxSchemaPatternSize))
	} else if patterns.size > MaxSchemaPatternSize {
		problems = append(problems, fmt.Sprintf("its patterns (\"pattern\" values and \"patternProperties\" names) compile to at least %d instructions and character class runes in all, at most %d are allowed; "+
			"the largest, at %s, to %d (use shorter patterns, smaller repetition counts like {1000}, a character class like \\pL written once and repeated rather than written again, "+
			"or \"format\" (date, date-time, email, uuid…) instead of a pattern)",
			patterns.size, MaxSchemaPatternSize, quoteLocation(patterns.largestAt), patterns.largest))
	}
	if b.longest > MaxSchemaLocation {
		problems = append(problems, fmt.Sprintf("the location of the schema at %s is %d characters long, at most %d are allowed (use shorter property and definition names, or nest less)",
			quoteLocation(b.longestAt), b.longest, MaxSchemaLocation))
	}
	if len(problems) > 0 {
		return &SchemaBoundsError{Name: name, Problems: problems}
	}
	// Only a pattern where a schema goes: one in data (an enum value, an
	// unknown keyword's object) is compiled only if a reference reaches it,
	// and the compiler then says what is wrong with it.
	if b.patterns.invalid != nil {
		return &SchemaPatternError{Name: name, At: b.patterns.invalidAt, Err: b.patterns.invalid}
	}
	return nil
}

// quoteLocation shows a location in a message: the root as "the root",
// a long one cut.
func quoteLocation(loc string) string {
	if loc == "" {
		return "the root"
	}
	if len(loc) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(loc[cut]) {
			cut--
		}
		return loc[:cut] + "…"
	}
	return loc
}

// Keywords by what they hold and whether what they hold applies to a member
// or element of the value (a nesting level) or to the value itself. The
// union of every draft's, as the compiler lists subschemas.
var (
	schemaOne = map[string]bool{ // one schema; true: a level down
		"not": false, "if": false, "then": false, "else": false, "propertyNames": false,
		"additionalProperties": true, "unevaluatedProperties": true, "items": true,
		"additionalItems": true, "contains": true, "unevaluatedItems": true, "contentSchema": true,
	}
	schemaList = map[string]bool{ // an array of schemas
		"allOf": false, "anyOf": false, "oneOf": false, "prefixItems": true, "items": true,
	}
	schemaMap = map[string]bool{ // an object of schemas by name
		"properties": true, "patternProperties": true,
		"$defs": false, "definitions": false, "dependentSchemas": false, "dependencies": false,
	}
)

// schema measures v, a schema at p (or an object in data there).
func (b *schemaBounds) schema(v any, p schemaPlace) {
	m, isObject := v.(map[string]any)
	if !isObject {
		if _, isBool := v.(bool); isBool && !p.data {
			b.subschemaAt(p)
		} else if a, ok := v.([]any); ok {
			for i, e := range a {
				b.down(e, p, strconv.Itoa(i), false, true)
			}
		}
		return
	}
	if !b.subschemaAt(p) {
		return // too long a location: nothing below it is measured
	}
	if id, ok := m["$id"].(string); ok && p.locLen > 0 && !strings.HasPrefix(id, "#") {
		p.scoped = true
	}
	for _, k := range sortedKeys(m) {
		val := m[k]
		kw := escapeSegment(k)
		if deeper, ok := schemaMap[k]; ok {
			if mm, ok := val.(map[string]any); ok {
				for _, n := range sortedKeys(mm) {
					switch k {
					case "properties":
						b.properties++
						b.chars += utf8.RuneCountInString(n)
					case "$defs", "definitions":
						b.chars += utf8.RuneCountInString(n)
					}
					if k == "patternProperties" {
						b.pattern(n, p, "patternProperties/"+escapeSegment(n))
					}
					if _, names := mm[n].([]any); k == "dependencies" && names {
						continue // dependencies' other form: required names
					}
					b.down(mm[n], p, kw+"/"+escapeSegment(n), deeper, false)
				}
				continue
			}
		}
		if deeper, ok := schemaList[k]; ok {
			if a, ok := val.([]any); ok {
				for i, e := range a {
					b.down(e, p, kw+"/"+strconv.Itoa(i), deeper, false)
				}
				continue
			}
		}
		if deeper, ok := schemaOne[k]; ok {
			if _, isArray := val.([]any); !isArray {
				b.down(val, p, kw, deeper, false)
				continue
			}
		}
		switch k {
		case "enum":
			if a, ok := val.([]any); ok {
				b.enumValues += len(a)
			}
			b.chars += stringChars(val)
		case "const":
			b.chars += stringChars(val)
		case "pattern":
			if src, ok := val.(string); ok {
				b.pattern(src, p, "pattern")
			}
		case "$ref":
			if ref, ok := val.(string); ok {
				b.ref(ref, p.scoped)
				b.reachesData = b.reachesData || refReachesData(ref)
			}
		case "$dynamicRef":
			b.lookups++
			if ref, ok := val.(string); ok {
				b.reachesData = b.reachesData || refReachesData(ref)
			}
		case "$recursiveRef", "$dynamicAnchor":
			b.lookups++
		case "$recursiveAnchor":
			if val == true {
				b.lookups++
			}
		}
		b.down(val, p, kw, false, true)
	}
}

// ref counts a "$ref" the compiler resolves by looking through every
// subschema (see MaxSchemaLookups).
func (b *schemaBounds) ref(ref string, scoped bool) {
	switch {
	case scoped || !strings.HasPrefix(ref, "#"):
		b.lookups++ // by URL, or against a base of its own
	case ref == "#" || ref == "#/":
	case !strings.HasPrefix(ref, "#/"):
		b.lookups++ // by anchor name
	case !isSchemaPointer(ref[2:]):
		if b.otherPlaces == nil {
			b.otherPlaces = map[string]bool{}
		}
		b.otherPlaces[ref] = true // the compiler resolves each place once
	}
}

// isSchemaPointer reports whether a JSON pointer (without its leading "/")
// names a place where a schema goes: keywords that hold a schema, each
// followed by a name or an index where it holds several.
func isSchemaPointer(ptr string) bool {
	segs := strings.Split(ptr, "/")
	for i := 0; i < len(segs); {
		kw := segs[i]
		_, isMap := schemaMap[kw]
		_, isList := schemaList[kw]
		_, isOne := schemaOne[kw]
		switch {
		case isMap && i+1 < len(segs), isList && i+1 < len(segs) && allDigits(segs[i+1]):
			i += 2
		case isOne:
			i++
		default:
			return false
		}
	}
	return true
}

// data measures a value that is not where a schema goes: each object in it
// may be compiled as one if a "$ref" points there.
func (b *schemaBounds) data(v any, p schemaPlace) {
	switch v := v.(type) {
	case map[string]any:
		b.schema(v, p)
	case []any:
		if p.locLen > MaxSchemaLocation {
			return // as deep as schemas get: nothing below it is measured
		}
		for i, e := range v {
			b.down(e, p, strconv.Itoa(i), false, true)
		}
	}
}

// subschemaAt counts a schema at p (the root is not a subschema) and
// reports whether its location is within the bound.
func (b *schemaBounds) subschemaAt(p schemaPlace) bool {
	if p.locLen > 0 {
		b.subschemas++
	}
	if p.level > b.deepest {
		b.deepest, b.deepestAt = p.level, b.loc()
	}
	if p.locLen > b.longest {
		b.longest, b.longestAt = p.locLen, b.loc()
	}
	return p.locLen <= MaxSchemaLocation
}

// stringChars counts the characters of the strings in an enum or const
// value: the strings themselves, and the names and strings of objects and
// arrays in it.
func stringChars(v any) int {
	switch v := v.(type) {
	case string:
		return utf8.RuneCountInString(v)
	case []any:
		n := 0
		for _, e := range v {
			n += stringChars(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += utf8.RuneCountInString(k) + stringChars(e)
		}
		return n
	}
	return 0
}

// escapeSegment is a name as the compiler writes it in a location.
func escapeSegment(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	s = strings.ReplaceAll(s, "/", "~1")
	return url.PathEscape(s)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pattern measures a pattern at p, under the keyword path kw ("pattern",
// "patternProperties/<name>"). One in data is compiled only if a reference
// points to it or above it, so it is kept apart (see reachesData).
func (b *schemaBounds) pattern(src string, p schemaPlace, kw string) {
	at := func() string { return b.loc() + "/" + kw }
	if p.inData {
		b.dataPatterns.add(src, at)
	} else {
		b.patterns.add(src, at)
	}
}

// patternMeasure sums what patterns compile to (see MaxSchemaPatternSize).
// It stops parsing once beyond the bound: parsing more would only cost,
// and a class like \pL allocates its runes again each time it is written.
type patternMeasure struct {
	size, largest int64
	largestAt     string        // the location of the largest pattern, the first found
	tooLargeAt    string        // the location of a pattern regexp/syntax refuses as too large
	invalid       *syntax.Error // the first pattern regexp/syntax refuses otherwise
	invalidAt     string        // and its location
}

func (m *patternMeasure) add(src string, at func() string) {
	if m.size > MaxSchemaPatternSize || m.tooLargeAt != "" {
		return
	}
	re, err := parsePattern(src)
	if err != nil {
		// The compiler parses it the same way and would say only that it
		// "is not valid 'regex'": beyond regexp/syntax's own limit (about
		// 3.3 million instructions or 33 million runes) the bound's message
		// says more, and any other error is a SchemaPatternError's.
		var se *syntax.Error
		switch {
		case !errors.As(err, &se):
		case se.Code == syntax.ErrLarge:
			m.tooLargeAt = at()
		case m.invalid == nil:
			m.invalid, m.invalidAt = se, at()
		}
		return
	}
	n := patternSize(re)
	m.size += n
	if n > m.largest {
		m.largest, m.largestAt = n, at()
	}
}

// merge adds what o measured.
func (m *patternMeasure) merge(o patternMeasure) {
	m.size += o.size
	if o.largest > m.largest {
		m.largest, m.largestAt = o.largest, o.largestAt
	}
	if m.tooLargeAt == "" {
		m.tooLargeAt = o.tooLargeAt
	}
}

// refReachesData reports whether a "$ref" or "$dynamicRef" may point into a
// place that is not where a schema goes (an enum, const, default or examples
// value, a keyword the router does not know): the compiler then compiles
// what is there as a schema, its patterns too. Anchors and "$id"s in data
// are not found, so a reference by anchor name or to a URL without a
// fragment does not; a JSON pointer to a schema does not; anything else
// might (a percent-encoded fragment may decode to a pointer).
func refReachesData(ref string) bool {
	i := strings.IndexByte(ref, '#')
	if i < 0 {
		return false
	}
	frag := ref[i+1:]
	switch {
	case frag == "" || frag == "/":
		return false
	case strings.HasPrefix(frag, "/"):
		return !isSchemaPointer(frag[1:])
	}
	return strings.Contains(frag, "%")
}
