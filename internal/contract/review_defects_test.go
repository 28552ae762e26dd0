package contract_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// Draft 2020-12 applies a "$ref" together with its sibling keywords, and every
// member of an "allOf" to the same value: the properties declared beside the
// $ref or in an allOf member are declared, for no_extra_keys at run time and
// for rule paths at load.
func TestSchema_RefSiblingsAndAllOfDeclareProperties(t *testing.T) {
	defs := `"$defs":{"base":{"type":"object","properties":{"id":{"type":"string"},"total":{"type":"number"}},"required":["id"]}}`
	schemas := map[string]string{
		"$ref with sibling properties": `{"$ref":"#/$defs/base","properties":{"note":{"type":"string"},"flag":{"type":"boolean"}},"required":["note"],` + defs + `}`,
		"allOf of $ref and properties": `{"allOf":[{"$ref":"#/$defs/base"},{"properties":{"note":{"type":"string"},"flag":{"type":"boolean"}},"required":["note"]}],` + defs + `}`,
		"properties beside allOf":      `{"type":"object","properties":{"note":{"type":"string"},"flag":{"type":"boolean"}},"required":["note"],"allOf":[{"$ref":"#/$defs/base"}],` + defs + `}`,
	}
	for name, schema := range schemas {
		t.Run(name, func(t *testing.T) {
			// A valid output with a key from each part is not an extra key.
			checkCase(t, mustValidator(t, []byte(schema), contract.Rules{}), `{"id":"x","note":"a","flag":true}`, nil, "")

			s, err := contract.CompileSchema([]byte(schema), "")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.Properties(), []string{"flag", "id", "note", "total"}; !slices.Equal(got, want) {
				t.Fatalf("Properties() = %v, want %v", got, want)
			}
			if got := s.Required(); !slices.Contains(got, "id") || !slices.Contains(got, "note") || len(got) != 2 {
				t.Fatalf("Required() = %v, want id and note", got)
			}
			// A valid output, with a key from each part, passes no_extra_keys.
			val := mustValidator(t, []byte(schema), contract.Rules{
				Enums:  map[string][]any{"/note": {"a", "b"}},
				Ranges: map[string]contract.Range{"/total": {Min: ptr(0.0)}},
			})
			checkCase(t, val, `{"id":"x","note":"a","flag":true,"total":3}`, nil, "")
			checkCase(t, val, `{"id":"x","note":"c","total":3,"extra":1}`, []v{{"no_extra_keys", "/extra"}, {"enum", "/note"}}, `key "extra" is not declared`)

			// The types of every part still apply at load.
			_, err = contract.NewValidator([]byte(schema), "", contract.Rules{Ranges: map[string]contract.Range{"/flag": {Min: ptr(0.0)}}})
			if err == nil || !strings.Contains(err.Error(), `path "/flag" is a boolean in the output schema`) {
				t.Fatalf("range on a boolean declared beside the $ref: %v", err)
			}
			_, err = contract.NewValidator([]byte(schema), "", contract.Rules{Enums: map[string][]any{"/nope": {"a"}}})
			if err == nil || !strings.Contains(err.Error(), `property "nope" is not declared in the output schema at $ (declared: flag, id, note, total)`) {
				t.Fatalf("undeclared property: %v", err)
			}
		})
	}
}

// additionalProperties true (or a schema) admits undeclared keys: a rule path
// to one loads. no_extra_keys still means "declared in properties", so at the
// top level, with no_extra_keys on, such a path could never be present in a
// passing output, and that is refused at load.
func TestSchema_AdditionalPropertiesOpen(t *testing.T) {
	for name, addl := range map[string]string{"true": `true`, "empty schema": `{}`, "typed schema": `{"type":"number"}`} {
		t.Run(name, func(t *testing.T) {
			schema := []byte(`{"type":"object","properties":{"a":{},"meta":{"type":"object","properties":{"known":{}},"additionalProperties":` + addl + `}},"additionalProperties":` + addl + `}`)
			val := mustValidator(t, schema, contract.Rules{
				NoExtraKeys: ptr(false),
				Ranges:      map[string]contract.Range{"/meta/score": {Max: ptr(5.0)}, "/other": {Max: ptr(5.0)}},
			})
			checkCase(t, val, `{"a":1,"meta":{"score":9},"other":1}`, []v{{"range", "/meta/score"}}, "above the maximum 5")

			// Nested paths load with no_extra_keys on; top-level keys outside
			// "properties" stay extra keys.
			val = mustValidator(t, schema, contract.Rules{Ranges: map[string]contract.Range{"/meta/score": {Max: ptr(5.0)}}})
			checkCase(t, val, `{"a":1,"meta":{"score":1,"x":2},"other":1}`, []v{{"no_extra_keys", "/other"}}, `key "other" is not declared in the output schema`)
			_, err := contract.NewValidator(schema, "", contract.Rules{Ranges: map[string]contract.Range{"/other": {Max: ptr(5.0)}}})
			if err == nil || !strings.Contains(err.Error(), `ranges[/other]: path "/other": no_extra_keys rejects the top-level key "other"`) {
				t.Fatalf("path to a key no_extra_keys rejects: %v", err)
			}
		})
	}
	// The schema of additional properties still types the path.
	schema := []byte(`{"type":"object","properties":{"meta":{"type":"object","properties":{"known":{}},"additionalProperties":{"type":"number"}}}}`)
	_, err := contract.NewValidator(schema, "", contract.Rules{Enums: map[string][]any{"/meta/score/x": {1}}})
	if err == nil || !strings.Contains(err.Error(), `/meta/score is a number in the output schema, so it has no property "x"`) {
		t.Fatalf("path through a typed additionalProperties: %v", err)
	}
	// additionalProperties false stays closed.
	schema = []byte(`{"type":"object","properties":{"meta":{"type":"object","properties":{"known":{}},"additionalProperties":false}}}`)
	if _, err := contract.NewValidator(schema, "", contract.Rules{Enums: map[string][]any{"/meta/score": {1}}}); err == nil || !strings.Contains(err.Error(), `property "score" is not declared`) {
		t.Fatalf("closed object: %v", err)
	}
}

// enum and equal compare numbers by their decimal value, exactly: above 2^53
// two different integers are one float64.
func TestRules_NumbersCompareExactly(t *testing.T) {
	var rules contract.Rules
	if err := json.Unmarshal([]byte(`{"enums":{"/f":[0.1, 100]}}`), &rules); err != nil {
		t.Fatal(err)
	}
	rules.Enums["/n"] = []any{9007199254740992, int64(-9007199254740992), 2}
	rules.Equal = []contract.EqualRule{{Left: "/a", Right: "/b"}}
	val := mustValidator(t, schemaFor(`"n":{}`, `"f":{}`, `"a":{}`, `"b":{}`), rules)

	for _, ok := range []string{
		`{"n":9007199254740992,"a":9007199254740993,"b":9007199254740993}`,
		`{"n":9007199254740992.0,"a":[1,{"x":1.50}],"b":[1.0,{"x":1.5}]}`,
		`{"n":-9.007199254740992e15,"f":0.1,"a":12345678901234567890,"b":1.234567890123456789e19}`,
		`{"n":2.000,"f":1e2,"a":-0,"b":0.0}`,
		`{"n":2,"f":0.10,"a":1E-1,"b":0.1}`,
	} {
		checkCase(t, val, ok, nil, "")
	}
	checkCase(t, val, `{"n":9007199254740993}`, []v{{"enum", "/n"}}, "9007199254740993 is not one of [9007199254740992, -9007199254740992, 2]")
	checkCase(t, val, `{"n":-9007199254740993}`, []v{{"enum", "/n"}}, "")
	checkCase(t, val, `{"f":0.1000000000000000055511151231257827}`, []v{{"enum", "/f"}}, "")
	checkCase(t, val, `{"a":9007199254740993,"b":9007199254740992}`, []v{{"equal", "/a"}}, "must equal /b: got 9007199254740993, /b is 9007199254740992")
	checkCase(t, val, `{"a":[9007199254740993],"b":[9007199254740992]}`, []v{{"equal", "/a"}}, "")
	checkCase(t, val, `{"a":12345678901234567891,"b":12345678901234567890}`, []v{{"equal", "/a"}}, "")
	checkCase(t, val, `{"a":1e-400,"b":0}`, []v{{"equal", "/a"}}, "")
	// (1e-999 is as small as the database takes written out: 1e-1006 and below
	// are json.unstorable, see TestValidateRefusesANumberWrittenOutTooLong.)
	checkCase(t, val, `{"a":1e-999,"b":1e-998}`, []v{{"equal", "/a"}}, "")
	// An exponent beyond what the database stores is refused before any rule.
	checkCase(t, val, `{"a":1e-99999999999999999999,"b":1e-99999999999999999998}`, []v{{"json.unstorable", "$"}}, "")
	checkCase(t, val, `{"a":"1","b":1}`, []v{{"equal", "/a"}}, "")
}

// RFC 6901 has two escapes, ~0 and ~1; any other "~" is an error, not text.
func TestNewValidator_PointerEscapes(t *testing.T) {
	schema := schemaFor(`"a~b":{}`, `"c/d":{}`, `"a~2b":{}`, `"e~":{}`)
	mustValidator(t, schema, contract.Rules{Enums: map[string][]any{"/a~0b": {1}, "/c~1d": {1}}})
	for _, p := range []string{"/a~2b", "/e~", "/a~b"} {
		_, err := contract.NewValidator(schema, "", contract.Rules{Enums: map[string][]any{p: {1}}})
		if err == nil || !strings.Contains(err.Error(), `is not an escape: in a JSON pointer "~" must be followed by 0 (for a "~" in the key) or 1 (for a "/")`) {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

// A custom rule listed twice runs once.
func TestCustomRuleListedTwiceRunsOnce(t *testing.T) {
	registerTestRules()
	val := mustValidator(t, schemaFor(`"a":{}`), contract.Rules{Custom: []string{"test.reports", "test.reports"}})
	checkCase(t, val, `{"a":1}`, []v{{"custom:test.reports", "$"}}, "whole doc is wrong")
}
