package contract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A misspelt keyword in a prompt's schema was ignored, as the standard has
// it for a keyword it does not know: "additonalProperties": false closed
// nothing, "requried" required nothing, "maxLenght" bounded nothing, and the
// answers they were meant to refuse won. Such a key is refused when the
// schema compiles, naming where it is and the keyword meant.
func TestMisspeltSchemaKeywordIsRefused(t *testing.T) {
	for _, tc := range []struct{ schema, key, at, meant string }{
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"additonalProperties":false}}}`,
			"additonalProperties", "#/properties/a", "additionalProperties"},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"requried":["b"]}}}`,
			"requried", "#/properties/a", "required"},
		{`{"type":"object","properties":{"a":{"type":"string","maxLenght":3}}}`, "maxLenght", "#/properties/a", "maxLength"},
		{`{"type":"object","properties":{"a":{"type":"string","MaxLength":3}}}`, "MaxLength", "#/properties/a", "maxLength"},
		{`{"tpye":"object"}`, "tpye", "the schema's root", "type"},
		{`{"type":"object","$defs":{"d":{"enums":["x"]}},"properties":{"a":{"$ref":"#/$defs/d"}}}`, "enums", "#/$defs/d", "enum"},
		{`{"type":"object","anyOf":[{"required":["a"]},{"ref":"#/$defs/x"}],"$defs":{"x":{}}}`, "ref", "#/anyOf/1", "$ref"},
		{`{"type":"array","item":{"type":"string"}}`, "item", "the schema's root", "items"},
	} {
		_, err := contract.NewValidator([]byte(tc.schema), "out.json", contract.Rules{NoExtraKeys: ptr(false)})
		want := []string{"schema out.json: ", `"` + tc.key + `" at ` + tc.at + " is not a JSON Schema keyword", `did you mean "` + tc.meant + `"?`, `name starting with "x-"`}
		if err == nil {
			t.Errorf("%s loaded", tc.key)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", tc.key, err, w)
			}
		}
	}
}

// What is not a keyword is not judged as one: names under properties,
// $defs, patternProperties and dependentSchemas, enum, const, default and
// examples values, a vendor's "x-" keys and what they hold, and unknown keys
// near no keyword that checks something (an "example", "nullable", a
// misspelt annotation). A caller's schema keeps the standard's rule: an
// unknown keyword is ignored.
func TestSchemaKeysThatAreNotMisspeltKeywordsLoad(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"requried":{"type":"string"},"tpye":{"type":"string"},"item":{"type":"string"}}}`,
		`{"type":"object","$defs":{"enums":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/enums"}}}`,
		`{"type":"object","patternProperties":{"^tpye$":{"type":"string"}},"dependentSchemas":{"requried":{}},"dependentRequired":{"item":["tpye"]}}`,
		`{"type":"object","properties":{"a":{"enum":[{"requried":1}],"default":{"tpye":2},"examples":[{"maxLenght":3}]}},"const":{"item":1}}`,
		`{"type":"object","x-requried":["a"],"x-vendor":{"tpye":"object"},"properties":{"a":{"type":"string","example":"x","nullable":true,"titel":"A","descripton":"a","note":"n"}}}`,
	} {
		if _, err := contract.NewValidator([]byte(schema), "out.json", contract.Rules{NoExtraKeys: ptr(false)}); err != nil {
			t.Errorf("%s: %v", schema, err)
		}
	}
	if _, err := contract.CompileRequestSchema([]byte(`{"type":"object","properties":{"a":{"type":"string","maxLenght":3}}}`), "response_format"); err != nil {
		t.Errorf("a caller's schema with an unknown keyword: %v", err)
	}
}

// A pattern Go's regular expressions cannot parse in a prompt's schema said
// only that it "is not valid 'regex'"; it is the *SchemaPatternError a
// caller's schema gets, saying why (RE2: no lookbehind...) and what to do.
func TestPromptSchemaPatternRE2CannotParse(t *testing.T) {
	for _, tc := range []struct{ schema, at string }{
		{`{"type":"object","properties":{"amount":{"type":"string","pattern":"(?<=EUR )\\d+"}}}`, "/properties/amount/pattern"},
		{`{"type":"object","patternProperties":{"^(?=x)":{"type":"string"}}}`, "/patternProperties/%5E%28%3F=x%29"}, // as the compiler writes it
	} {
		_, err := contract.CompileSchema([]byte(tc.schema), "out.json")
		var pe *contract.SchemaPatternError
		if !errors.As(err, &pe) || pe.At != tc.at || !strings.Contains(err.Error(), "schema out.json: the pattern at "+tc.at) ||
			!strings.Contains(err.Error(), "RE2") || !strings.Contains(err.Error(), "lookbehind") {
			t.Errorf("%s: %v, want a SchemaPatternError at %s", tc.schema, err, tc.at)
		}
	}
}
