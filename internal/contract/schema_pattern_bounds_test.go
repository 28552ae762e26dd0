package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Patterns of the kind callers write: an email address, a UUID, an ISO
// date, a name in any script.
var ordinaryPatterns = []string{
	`^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$`,
	`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`,
	`^\d{4}-\d{2}-\d{2}$`,
	`^[\p{L} '-]+$`,
}

// bigPattern compiles to 20,020 instructions: 13 of them are beyond
// MaxSchemaPatternSize.
var bigPattern = strings.Repeat("x{1000}", 20)

func measurePatterns(t *testing.T, schema string) int64 {
	t.Helper()
	doc, err := ParseJSON([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	var b schemaBounds
	b.schema(doc, schemaPlace{})
	return b.patterns.size
}

// Patterns are measured by what they compile to, and a schema whose
// patterns compile to more than MaxSchemaPatternSize is refused before it is
// compiled (each schema here is also invalid: "type": 5), with an error
// naming the bound, the size and where the largest pattern is.
func TestRequestSchemaPatternsBeyondTheBoundAreRefused(t *testing.T) {
	props := func(n int, schema func(i int) string) string {
		var ps []string
		for i := range n {
			ps = append(ps, fmt.Sprintf(`"p%03d":%s`, i, schema(i)))
		}
		return `"properties":{` + strings.Join(ps, ",") + `}`
	}
	var patternProps []string
	for i := range 13 {
		patternProps = append(patternProps, fmt.Sprintf(`"^%d%s":{}`, i, bigPattern))
	}
	cases := []struct{ name, schema, want string }{
		{"x{1000} twenty times on 100 properties", `{` + props(100, func(int) string { return fmt.Sprintf(`{"type":"string","pattern":%q}`, bigPattern) }) + `}`,
			"compile to at least 260260 instructions and character class runes in all, at most 250000 are allowed; the largest, at /properties/p000/pattern, to 20020"},
		{`\pL written 200 times`, `{"pattern":` + fmt.Sprintf("%q", "^"+strings.Repeat(`\pL`, 200)+"$") + `}`,
			"compile to at least 264004 instructions and character class runes in all, at most 250000 are allowed; the largest, at /pattern, to 264004"},
		{"patternProperties names", `{"patternProperties":{` + strings.Join(patternProps, ",") + `}}`,
			"compile to at least 260315 instructions and character class runes in all, at most 250000 are allowed; the largest, at /patternProperties/%5E10x%7B1000%7D"},
		{"patterns in a const a $ref points to", `{"$ref":"#/const/properties/a","const":{"properties":{"a":{"anyOf":[` +
			strings.Repeat(fmt.Sprintf(`{"pattern":%q},`, bigPattern), 12) + fmt.Sprintf(`{"pattern":%q}`, bigPattern) + `]}}}}`,
			"compile to at least 260260 instructions"},
		{"a pattern beyond regexp's own limit", `{"pattern":"` + strings.Repeat("x{1000}", 3400) + `"}`,
			"the pattern at /pattern is too large for Go's regular expressions to compile (expression too large); its patterns may compile to at most 250000"},
	}
	for _, c := range cases {
		schema := `{"type":5,` + strings.TrimPrefix(c.schema, "{")
		_, err := CompileRequestSchema([]byte(schema), "response_format.json_schema")
		var be *SchemaBoundsError
		if !errors.As(err, &be) {
			t.Errorf("%s: %.300v, want a *SchemaBoundsError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `instead of a pattern`) {
			t.Errorf("%s: %q\nwant %q in it, and what to do instead", c.name, err, c.want)
		}
		if len(be.Problems) != 1 {
			t.Errorf("%s: %d problems %q, want only the pattern bound", c.name, len(be.Problems), be.Problems)
		}
	}
}

// Ordinary patterns are far inside the bound: 500 properties with one each
// (an email address, a UUID or a date; a name in any script for one in 25)
// compile.
func TestRequestSchemaOrdinaryPatternsAreAccepted(t *testing.T) {
	var props []string
	for i := range 500 {
		p := ordinaryPatterns[i%3]
		if i%25 == 0 {
			p = ordinaryPatterns[3]
		}
		props = append(props, fmt.Sprintf(`"p%03d":{"type":"string","pattern":%q}`, i, p))
	}
	schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	if _, err := CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		t.Fatal(err)
	}
	if size := measurePatterns(t, schema); size > MaxSchemaPatternSize/2 {
		t.Errorf("500 ordinary patterns measure %d, more than half of MaxSchemaPatternSize (%d)", size, MaxSchemaPatternSize)
	}
}

// A "pattern" in an enum, const, default or examples value, or under a
// keyword the router does not know, is data: it is not compiled unless a
// reference points there, and does not count. Nor does a property named
// "pattern".
func TestRequestSchemaPatternsInDataAreNotCounted(t *testing.T) {
	big := func(key string) string {
		return strings.TrimSuffix(strings.Repeat(fmt.Sprintf(`{%q:%q},`, key, bigPattern), 13), ",")
	}
	bigNames := func() string {
		var names []string
		for i := range 13 {
			names = append(names, fmt.Sprintf(`"^%d%s":{}`, i, bigPattern))
		}
		return `{"patternProperties":{` + strings.Join(names, ",") + `}}`
	}
	schema := `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$anchor":"a"}},` +
		`"properties":{"pattern":{"type":"string"},"s":{"$ref":"#a"}},` +
		`"const":[` + big("pattern") + `],"enum":[[` + big("pattern") + `],` + bigNames() + `],` +
		`"examples":[{"properties":{"a":{"anyOf":[` + big("pattern") + `]}}}],"default":` + bigNames() + `,"x-patterns":[` + big("pattern") + `]}`
	if _, err := CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		var be *SchemaBoundsError
		if errors.As(err, &be) {
			t.Fatalf("patterns in data counted: %v", err)
		}
	}
	if size := measurePatterns(t, schema); size != 0 {
		t.Errorf("patterns in data measure %d, want 0", size)
	}
}

// atBoundsPatternSchema is atBoundsSchema with patterns on its string
// properties that compile to exactly MaxSchemaPatternSize: ordinary ones,
// then "x{1000}", then a literal for the rest.
func atBoundsPatternSchema(t *testing.T) string {
	var doc map[string]any
	if err := json.Unmarshal([]byte(atBoundsSchema()), &doc); err != nil {
		t.Fatal(err)
	}
	props := doc["properties"].(map[string]any)
	var names []string
	for n, s := range props {
		if m, ok := s.(map[string]any); ok && len(m) == 1 && m["type"] == "string" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	left := int64(MaxSchemaPatternSize)
	for i, n := range names {
		p := strings.Repeat("y", int(min(left, 1000)))
		switch {
		case left == 0:
			return mustMarshal(t, doc)
		case i < 200:
			p = ordinaryPatterns[i%len(ordinaryPatterns)]
		case left >= 1000:
			p = "x{1000}"
		}
		re, err := parsePattern(p)
		if err != nil {
			t.Fatal(err)
		}
		left -= patternSize(re)
		props[n].(map[string]any)["pattern"] = p
	}
	t.Fatalf("%d string properties are not enough for the patterns", len(names))
	return ""
}

func mustMarshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A schema at every bound, MaxSchemaPatternSize too, compiles.
func TestRequestSchemaAtEveryBoundWithPatternsIsAccepted(t *testing.T) {
	schema := atBoundsPatternSchema(t)
	doc, err := ParseJSON([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	var b schemaBounds
	b.schema(doc, schemaPlace{})
	got := map[string]int64{"properties": int64(b.properties), "nesting": int64(b.deepest), "chars": int64(b.chars), "enum values": int64(b.enumValues),
		"subschemas": int64(b.subschemas), "location": int64(b.longest), "lookups": int64(b.lookups + len(b.otherPlaces)), "patterns": b.patterns.size}
	want := map[string]int64{"properties": MaxSchemaProperties, "nesting": MaxSchemaNesting, "chars": MaxSchemaChars, "enum values": MaxSchemaEnumValues,
		"subschemas": MaxSchemaSubschemas, "location": MaxSchemaLocation, "lookups": MaxSchemaLookups, "patterns": MaxSchemaPatternSize}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: the generator has %d, want it at the bound %d", k, got[k], w)
		}
	}
	if _, err := compileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		t.Fatalf("a schema at every bound: %.500v", err)
	}
}

// A schema at every bound, MaxSchemaPatternSize too, is held by the cache,
// within its owner's share: two requests compile it once. (It holds about 15.8 MB; patterns estimated
// at 200 bytes an instruction made it 45 MB, beyond maxCachedEntryBytes,
// and it was compiled on every request.)
func TestRequestSchemaAtEveryBoundWithPatternsIsCached(t *testing.T) {
	schema := []byte(atBoundsPatternSchema(t))
	c, compiles := countingCache(maxCachedSchemas, maxCachedBytes, maxCachedEntryBytes)
	c.ownerEntries, c.ownerBytes = ownerCachedSchemas, ownerCachedBytes // within one owner's share
	first, err := c.getFor(testOwner, schema, cacheTestName)
	if err != nil {
		t.Fatalf("a schema at every bound: %.500v", err)
	}
	again, err := c.getFor(testOwner, schema, cacheTestName)
	if err != nil {
		t.Fatal(err)
	}
	if n := compiles.Load(); n != 1 || again != first {
		t.Errorf("two requests of a schema at every bound: %d compiles, the second got %p (the first %p); want 1 compile and the same schema; it is estimated at %d bytes, maxCachedEntryBytes is %d",
			n, again, first, outcomeSize(schemaKey{name: cacheTestName}, first, nil), maxCachedEntryBytes)
	}
	checkCacheInvariants(t, c)
}
