package contract

import (
	"strings"
	"testing"
)

// validateRC3 compiles schema (no business rules unless given) and judges out.
func validateRC3(t *testing.T, schema string, rules Rules, out string) []Violation {
	t.Helper()
	if rules.NoExtraKeys == nil {
		rules.NoExtraKeys = new(bool)
	}
	v, err := NewValidator([]byte(schema), "s.json", rules)
	if err != nil {
		t.Fatal(err)
	}
	doc, vs := v.Validate(out)
	if doc != nil {
		t.Fatalf("%s was accepted; want it refused", out)
	}
	return vs
}

// A failed "contains" (with or without minContains) is reported as the
// "type" failure of items that did not match: [1,"a"] against
// contains:{type:string}, minContains:2 reads "schema.type at /0: expected
// string", although the schema lets /0 be a number; the real failure (one
// matching item, two needed) is not named. ["a"] alone does get
// "schema.minContains at $".
func TestContainsFailureIsTheArrays(t *testing.T) {
	for _, c := range []struct{ schema, out string }{
		{`{"type":"array","contains":{"type":"string"},"minContains":2}`, `[1,"a"]`},
		{`{"type":"array","contains":{"type":"string"}}`, `[1,2]`},
	} {
		vs := validateRC3(t, c.schema, Rules{}, c.out)
		named := false
		for _, v := range vs {
			if v.Path != "$" {
				t.Errorf("%s: %v: a violation at an item; items that do not match \"contains\" break nothing", c.out, v)
			}
			if v.Path == "$" && (v.Rule == "schema.contains" || v.Rule == "schema.minContains") {
				named = true
			}
		}
		if !named {
			t.Errorf("%s: %v: want schema.contains or schema.minContains at $", c.out, vs)
		}
	}
}

// A "dependentRequired" (draft 2019-09+) or "dependencies" (draft 7)
// failure has rule "schema", naming no keyword, at "$" — unlike "required",
// which is schema.required at the missing property's path. SPEC §8: every
// failure names the rule.
func TestDependentRequiredRuleNamesItsKeyword(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","dependentRequired":{"a":["b"]}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":["b"]}}`,
	} {
		vs := validateRC3(t, schema, Rules{}, `{"a":1}`)
		if len(vs) != 1 || (vs[0].Rule != "schema.dependentRequired" && vs[0].Rule != "schema.dependencies") || vs[0].Path != "/b" {
			t.Errorf("%s: got %v; want one schema.dependentRequired (or schema.dependencies) at /b", schema, vs)
		}
	}
}

// A property whose schema is false fails with rule "schema" (the failing
// schema is `false`, see keyword); but when the property's name is a
// keyword's ("type", "format", "enum"), the rule is that keyword's.
func TestFalsePropertyNamedLikeKeyword(t *testing.T) {
	vs := validateRC3(t, `{"type":"object","properties":{"type":false,"x":false}}`, Rules{}, `{"type":"a","x":1}`)
	for _, v := range vs {
		if v.Rule == "schema.type" {
			t.Errorf("%v: the value at /type is refused by a false schema, not by a \"type\" keyword (/x gets rule %q)", v, vs[len(vs)-1].Rule)
		}
	}
}

// The enum and equal rules' messages print values with json.Marshal, which
// escapes <, > and & for HTML: an operator reads `"Q\u0026A" is not one of
// ["R\u0026D", "\u003cnone\u003e"]`.
func TestRuleMessagesNotHTMLEscaped(t *testing.T) {
	schema := `{"type":"object","properties":{"c":{"type":"string"},"d":{"type":"string"}}}`
	rules := Rules{Enums: map[string][]any{"/c": {"R&D", "<none>"}}, Equal: []EqualRule{{Left: "/c", Right: "/d"}}}
	vs := validateRC3(t, schema, rules, `{"c":"Q&A","d":"<b>"}`)
	if len(vs) != 2 {
		t.Fatalf("got %v; want an enum and an equal violation", vs)
	}
	for _, v := range vs {
		if strings.Contains(v.Message, `\u00`) {
			t.Errorf("%s: message %q escapes <, > or & as for HTML", v.Rule, v.Message)
		}
	}
	if want := `"Q&A" is not one of ["R&D", "<none>"]`; vs[0].Message != want {
		t.Errorf("enum message %q, want %q", vs[0].Message, want)
	}
}

// A schema's enum or const failure quotes numbers as strings and null as
// Go's <nil> ("value must be one of "R&D", "1", <nil>"; "value must be
// "12""), and a const object says only "const failed": the operator is told
// the schema wants the string "1" or "12".
func TestSchemaEnumConstMessages(t *testing.T) {
	vs := validateRC3(t, `{"type":"object","properties":{"c":{"enum":["R&D",1,null]}}}`, Rules{}, `{"c":"x"}`)
	if m := vs[0].Message; strings.Contains(m, "<nil>") || strings.Contains(m, `"1"`) {
		t.Errorf("schema.enum message %q: want the values as JSON (1, null), not \"1\" and <nil>", m)
	}
	vs = validateRC3(t, `{"type":"object","properties":{"c":{"const":12}}}`, Rules{}, `{"c":13}`)
	if m := vs[0].Message; strings.Contains(m, `"12"`) {
		t.Errorf("schema.const message %q: the const is the number 12, not the string \"12\"", m)
	}
	vs = validateRC3(t, `{"type":"object","properties":{"c":{"const":{"a":1}}}}`, Rules{}, `{"c":13}`)
	if m := vs[0].Message; !strings.Contains(m, `{"a":1}`) {
		t.Errorf("schema.const message %q: want it to say which value is required ({\"a\":1})", m)
	}
}

// An output that starts with a character outside ASCII is refused with
// encoding/json's message for its first byte, which names a character the
// output does not hold: a UTF-8 byte-order mark reads "invalid character
// 'ï'", a no-break space 'Â', a curly quote or zero-width space 'â'.
func TestSyntaxMessageNamesTheCharacter(t *testing.T) {
	v, err := NewValidator([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), "s.json", Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, bad, want string }{
		{"\ufeff{\"a\":\"x\"}", "ï", "U+FEFF"},
		{"\u00a0{\"a\":\"x\"}", "Â", "U+00A0"},
		{"\u201ca\u201d", "â", "U+201C"},
	} {
		_, vs := v.Validate(c.out)
		if len(vs) != 1 || vs[0].Rule != "json.syntax" {
			t.Fatalf("%q: got %v; want one json.syntax", c.out, vs)
		}
		if m := vs[0].Message; strings.Contains(m, c.bad) || !strings.Contains(m, c.want) {
			t.Errorf("%q: message %q names %q, which the output does not hold; want it to name %s", c.out, m, c.bad, c.want)
		}
	}
}
