package contract

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// atBoundsSchema is a caller's schema at every bound at once: 5,000
// properties (499 of them nullable through anyOf, 100 referring to a
// definition by anchor name, one with an enum of 1,000 values), one of them
// 10 levels down at a location of exactly 1,000 characters, 6,000
// subschemas and 120,000 characters of names and enum values.
func atBoundsSchema() string {
	// The chain c1 … c9, levels 1 to 9, and under c9 the deepest property,
	// named to make its location MaxSchemaLocation long.
	var prefix strings.Builder
	chars := 0
	for i := 1; i < MaxSchemaNesting; i++ {
		fmt.Fprintf(&prefix, "/properties/c%d", i)
		chars += len(fmt.Sprintf("c%d", i))
	}
	prefix.WriteString("/properties/")
	deepest := strings.Repeat("d", MaxSchemaLocation-prefix.Len())
	chars += len(deepest)
	inner := fmt.Sprintf(`{"type":"object","properties":{%q:{"type":"string"}}}`, deepest)
	for i := MaxSchemaNesting - 1; i >= 1; i-- {
		inner = fmt.Sprintf(`{"type":"object","properties":{"c%d":%s}}`, i, inner)
	}
	chain := strings.TrimSuffix(strings.TrimPrefix(inner, `{"type":"object","properties":{`), `}}`)

	var enum []string
	for i := range MaxSchemaEnumValues {
		enum = append(enum, fmt.Sprintf(`"v%03d"`, i))
		chars += 4
	}
	props := []string{chain, `"e":{"enum":[` + strings.Join(enum, ",") + `]}`}
	chars += len("e") + len("a") // the enum's property, the definition
	flat := MaxSchemaProperties - MaxSchemaNesting - 1
	budget := MaxSchemaChars - chars
	nullable := (MaxSchemaSubschemas - MaxSchemaProperties - 2) / 2 // the definition and its anyOf are 2
	for i := range flat {
		n := budget / flat
		if i < budget%flat {
			n++
		}
		name := fmt.Sprintf("p%04d", i)
		name += strings.Repeat("x", n-len(name))
		schema := `{"type":"string"}`
		switch {
		case i < nullable:
			schema = `{"anyOf":[{"type":"string"},{"type":"null"}]}`
		case i < nullable+MaxSchemaLookups:
			schema = `{"$ref":"#a"}`
		}
		props = append(props, fmt.Sprintf("%q:%s", name, schema))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `},` +
		`"$defs":{"a":{"$anchor":"a","anyOf":[{"type":"string"}]}}}`
}

// The generator is exactly at every bound, and a caller's schema there
// compiles: the bounds refuse only what is beyond them.
func TestRequestSchemaAtEveryBoundIsAccepted(t *testing.T) {
	schema := atBoundsSchema()
	var b schemaBounds
	doc, err := ParseJSON([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	b.schema(doc, schemaPlace{})
	got := map[string]int{"properties": b.properties, "nesting": b.deepest, "chars": b.chars, "enum values": b.enumValues,
		"subschemas": b.subschemas, "location": b.longest, "lookups": b.lookups + len(b.otherPlaces)}
	want := map[string]int{"properties": MaxSchemaProperties, "nesting": MaxSchemaNesting, "chars": MaxSchemaChars,
		"enum values": MaxSchemaEnumValues, "subschemas": MaxSchemaSubschemas, "location": MaxSchemaLocation, "lookups": MaxSchemaLookups}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: the generator has %d, want it at the bound %d", k, got[k], w)
		}
	}
	if _, err := CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		t.Fatalf("a schema at every bound: %v", err)
	}
}

// One past any bound is refused before the schema is compiled, with an error
// naming what was found, the bound and what counts. A prompt's schema is the
// operator's and is not bounded.
func TestRequestSchemaBeyondABoundIsRefused(t *testing.T) {
	repeat := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	empties := func(n int) string { return repeat(n, func(int) string { return "{}" }) }
	nested := `{"type":"string"}`
	for i := range MaxSchemaNesting + 1 {
		if i%2 == 0 {
			nested = `{"type":"object","properties":{"a":` + nested + `}}`
		} else {
			nested = `{"type":"array","items":` + nested + `}`
		}
	}
	cases := []struct {
		name, schema string
		want         []string
		cheap        bool // cheap enough to compile as a prompt's too
	}{
		{"properties", `{"type":"object","properties":{` + repeat(MaxSchemaProperties+1, func(i int) string { return fmt.Sprintf(`"p%d":true`, i) }) + `}}`,
			[]string{"it has 5001 object properties in all, at most 5000"}, false},
		{"nesting", nested,
			[]string{"/properties/a/items/properties/a/items/properties/a/items/properties/a/items/properties/a/items/properties/a is nested 11 levels deep, at most 10"}, true},
		{"characters", `{"type":"string","const":"` + strings.Repeat("x", MaxSchemaChars+1) + `"}`,
			[]string{"enum values and const values have 120001 characters in all, at most 120000"}, true},
		{"characters of names", `{"$defs":{` + repeat(122, func(i int) string { return fmt.Sprintf(`"%04d%s":{}`, i, strings.Repeat("d", 986)) }) + `}}`,
			[]string{"have 120780 characters in all, at most 120000"}, true},
		{"enum values", `{"enum":[` + repeat(MaxSchemaEnumValues+1, func(i int) string { return fmt.Sprint(i) }) + `]}`,
			[]string{"its enums have 1001 values in all, at most 1000"}, true},
		{"subschemas", `{"anyOf":[` + empties(MaxSchemaSubschemas+1) + `]}`,
			[]string{"it holds 6001 subschemas, at most 6000"}, false},
		{"boolean subschemas", `{"type":"object","properties":{` + repeat(3001, func(i int) string {
			return fmt.Sprintf(`"p%d":{"type":"object","additionalProperties":false}`, i)
		}) + `}}`,
			[]string{"it holds 6002 subschemas"}, false},
		{"subschemas under a keyword the router does not know", `{"$ref":"#/x-defs/anyOf/0","x-defs":{"anyOf":[` + empties(MaxSchemaSubschemas) + `]}}`,
			[]string{"it holds 6001 subschemas"}, false},
		{"subschemas in a const value", `{"const":{"anyOf":[` + empties(MaxSchemaSubschemas+1) + `]}}`,
			[]string{"it holds 6002 subschemas"}, false},
		{"location", `{"properties":{"` + strings.Repeat("n", MaxSchemaLocation-len("/properties/")+1) + `":{}}}`,
			[]string{"the location of the schema at /properties/nnnn", "is 1001 characters long, at most 1000"}, true},
		{"location of escaped names", `{"properties":{"` + strings.Repeat("é", 166) + `":{}}}`, // 166 characters, 996 escaped
			[]string{"the location of the schema at /properties/%C3%A9", "is 1008 characters long"}, true},
		{"references by anchor name", `{"anyOf":[` + repeat(MaxSchemaLookups+1, func(int) string { return `{"$ref":"#a"}` }) + `],"$defs":{"a":{"$anchor":"a"}}}`,
			[]string{"it has 101 references the router must look for", "at most 100 are allowed"}, true},
		{"references by URL", `{"anyOf":[` + repeat(MaxSchemaLookups+1, func(int) string { return `{"$ref":"https://example.com/a"}` }) + `],"$defs":{"a":{"$id":"https://example.com/a"}}}`,
			[]string{"it has 101 references the router must look for"}, true},
		{"references from inside a subschema with its own $id", `{"$defs":{"s":{"$id":"https://example.com/s","anyOf":[` +
			repeat(MaxSchemaLookups+1, func(int) string { return `{"$ref":"#/$defs/a"}` }) + `],"$defs":{"a":{}}}}}`,
			[]string{"it has 101 references the router must look for"}, true},
		{"references into places that are not schemas", `{"anyOf":[` + repeat(MaxSchemaLookups+1, func(i int) string { return fmt.Sprintf(`{"$ref":"#/x/%d"},{"$ref":"#/x/%d"}`, i, i) }) + `],` +
			`"x":[` + repeat(MaxSchemaLookups+1, func(int) string { return "{}" }) + `]}`,
			[]string{"it has 101 references the router must look for"}, true},
		{"dynamic references and anchors", `{"$dynamicAnchor":"n","type":"object","properties":{` +
			repeat(MaxSchemaLookups, func(i int) string { return fmt.Sprintf(`"p%d":{"$dynamicRef":"#n"}`, i) }) + `}}`,
			[]string{"it has 101 references the router must look for"}, true},
		{"every bound at once", `{"anyOf":[` + empties(MaxSchemaSubschemas+1) + `],"enum":[` + repeat(MaxSchemaEnumValues+1, func(i int) string { return fmt.Sprint(i) }) + `]}`,
			[]string{"its enums have 1001 values in all, at most 1000 are allowed; it holds 6001 subschemas"}, false},
	}
	for _, c := range cases {
		_, err := CompileRequestSchema([]byte(c.schema), "response_format.json_schema")
		var be *SchemaBoundsError
		if !errors.As(err, &be) {
			t.Errorf("%s: %v, want a *SchemaBoundsError", c.name, err)
			continue
		}
		for _, w := range append(c.want, "schema response_format.json_schema is beyond the bounds on a schema sent with a request: ") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q\nwant %q in it", c.name, err, w)
			}
		}
		if c.name != "every bound at once" && len(be.Problems) != 1 {
			t.Errorf("%s: %d problems %q, want only the bound it is beyond", c.name, len(be.Problems), be.Problems)
		}
		if !c.cheap {
			continue
		}
		if _, err := CompileSchema([]byte(c.schema), ""); err != nil {
			t.Errorf("%s as a prompt's schema: %v", c.name, err)
		}
		if _, err := CompileSelfContainedSchema([]byte(c.schema), "prompt.schema.json"); err != nil {
			t.Errorf("%s as a prompt's self-contained schema: %v", c.name, err)
		}
	}
}

// A "$ref" by JSON pointer to a schema is found directly, however many there
// are: they are not counted against MaxSchemaLookups, nor is a root's own $id.
func TestRequestSchemaPointerReferencesAreNotCounted(t *testing.T) {
	var refs []string
	for i := range 500 {
		refs = append(refs, fmt.Sprintf(`"a%d":{"$ref":"#/$defs/a"},"b%d":{"$ref":"#/$defs/b/properties/c/items"},"c%d":{"$ref":"#"}`, i, i, i))
	}
	schema := `{"$id":"https://example.com/root","type":"object","properties":{` + strings.Join(refs, ",") + `},"$defs":{"a":{"type":"string"},` +
		`"b":{"type":"object","properties":{"c":{"type":"array","items":{"type":"integer"}}}}}}`
	if _, err := CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		t.Fatal(err)
	}
}

// The bounds are checked before anything else about the schema: a schema
// beyond them is refused for that, whatever else is wrong with it (here a
// "type" that is not a type, and a reference to a file), so the compiler
// never sees it.
func TestRequestSchemaBoundsComeBeforeCompiling(t *testing.T) {
	enum := `"enum":[` + strings.TrimSuffix(strings.Repeat("0,", MaxSchemaEnumValues+1), ",") + `]`
	for _, schema := range []string{`{"type":5,` + enum + `}`, `{"$ref":"file:///etc/hostname",` + enum + `}`} {
		_, err := CompileRequestSchema([]byte(schema), "response_format.json_schema")
		var be *SchemaBoundsError
		if !errors.As(err, &be) {
			t.Errorf("%.40s…: %v, want a *SchemaBoundsError", schema, err)
		}
	}
}
