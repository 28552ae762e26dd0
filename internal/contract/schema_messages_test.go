package contract

import (
	"fmt"
	"strings"
	"testing"
)

// checkWC3 compiles schema and returns the violations of out, rendered.
func checkWC3(t *testing.T, schema, out string) []string {
	t.Helper()
	s, err := CompileSchema([]byte(schema), "")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseJSON([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range s.Check(doc) {
		got = append(got, v.String())
	}
	return got
}

func TestSchemaContainsMessages(t *testing.T) {
	for _, c := range []struct{ schema, out, want string }{
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","contains":{"type":"string"}}`, `[1]`,
			`schema.contains at $: must contain an item matching "contains", but 0 do`},
		{`{"type":"array","contains":{"type":"string"},"minContains":2}`, `[1,"a"]`,
			`schema.minContains at $: must contain at least 2 items matching "contains", but 1 do`},
		{`{"type":"object","properties":{"l":{"type":"array","contains":{"const":1}}}}`, `{"l":[2,3]}`,
			`schema.contains at /l: must contain an item matching "contains", but 0 do`},
	} {
		if got := checkWC3(t, c.schema, c.out); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %q, want %q", c.out, got, c.want)
		}
	}
}

// The keyword location is read from its start: a property named
// "properties" (or "type") is a name, and the keyword under it still counts.
func TestSchemaRuleUnderPropertyNamedLikeKeyword(t *testing.T) {
	got := checkWC3(t, `{"type":"object","properties":{"properties":{"type":"string"},"type":{"minLength":2},"n":false}}`, `{"properties":1,"type":"a","n":1}`)
	want := []string{
		`schema at /n: not allowed`,
		`schema.type at /properties: expected string, but got number`,
		`schema.minLength at /type: length must be >= 2, but got 1`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSchemaDependentRequiredNamesWithQuotes(t *testing.T) {
	got := checkWC3(t, `{"type":"object","dependentRequired":{"a b":["it's","c"]}}`, `{"a b":1,"c":2}`)
	want := `schema.dependentRequired at /it's: required property "it's" is missing (required when "a b" is present)`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSchemaEnumMessageListsJSONValuesClipped(t *testing.T) {
	var vals []string
	for i := range maxEnumShown + 3 {
		vals = append(vals, fmt.Sprint(i))
	}
	long := strings.Repeat("x", 200)
	got := checkWC3(t, `{"properties":{"e":{"enum":[`+strings.Join(vals, ",")+`]},"c":{"const":"`+long+`"},"d":{"$ref":"#/$defs/d"}},"$defs":{"d":{"enum":[1.50,"<a&b>",true]}}}`, `{"e":-1,"c":"y","d":2}`)
	if len(got) != 3 {
		t.Fatalf("got %q", got)
	}
	// sorted by path: /c, /d, /e
	if strings.Contains(got[0], long) || !strings.Contains(got[0], "…") {
		t.Errorf("const of 200 bytes: %q, want it clipped", got[0])
	}
	if want := `schema.enum at /d: value must be one of [1.50, "<a&b>", true]`; got[1] != want {
		t.Errorf("got %q, want %q", got[1], want)
	}
	if !strings.HasSuffix(got[2], ", 19, and 3 more]") {
		t.Errorf("enum of %d values: %q, want the first %d and how many more", len(vals), got[2], maxEnumShown)
	}
}

func TestSyntaxMessageInvalidUTF8(t *testing.T) {
	_, err := ParseJSON([]byte("\xff{}"))
	if want := "invalid JSON at byte 1: byte 0xFF (not UTF-8) is not allowed here"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestCompileMissingRefIsLocated(t *testing.T) {
	_, err := CompileSchema([]byte(`{"properties":{"a/b":{"items":{"$ref":"#/$defs/missing"}}},"$defs":{"x":{}}}`), "s.json")
	want := `schema s.json does not compile: "$ref": "#/$defs/missing" at /properties/a~1b/items: nothing is at that JSON pointer`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want it to start %q", err, want)
	}
	_, err = CompileRequestSchema([]byte(`{"properties":{"a":{"$ref":"#nope"}}}`), "body")
	want = `schema body does not compile: "$ref": "#nope" at /properties/a: no "$anchor" "nope" is defined`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestCompileMisspeltTypeSuggestsName(t *testing.T) {
	_, err := CompileSchema([]byte(`{"properties":{"a":{"type":"strin"},"b":{"type":"Object"},"c":{"type":"blob"}}}`), "s.json")
	if err == nil {
		t.Fatal("compiled")
	}
	msg := err.Error()
	for _, want := range []string{`at /properties/a/type: value must be one of`, `(did you mean "string"?)`, `(did you mean "object"?)`} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "expected array") || strings.Count(msg, "did you mean") != 2 {
		t.Errorf("%q: want no advice to write a list, and a suggestion for a and b only", msg)
	}
}
