package contract

import (
	"errors"
	"strings"
	"testing"
)

// A pattern Go's regular expressions cannot parse (JSON Schema allows
// ECMA-262's lookahead and backreferences, RE2 does not) was refused only by
// the compiler's meta-schema check, "'(?=x)abc' is not valid 'regex'",
// which says neither why nor what to do. It is refused before compiling,
// with where it is, what regexp/syntax says, and that patterns are RE2.
func TestRequestSchemaPatternGoCannotParseIsRefusedSayingWhy(t *testing.T) {
	cases := []struct{ schema, at, why string }{
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"([a-z"}}}`,
			"/properties/s/pattern", "missing closing ]: `[a-z`"},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"(?=x)abc"}}}`,
			"/properties/s/pattern", "invalid or unsupported Perl syntax: `(?=`"},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"(a)\\1"}}}`,
			"/properties/s/pattern", "invalid escape sequence: `\\1`"},
		{`{"type":"object","patternProperties":{"(a)\\1":{}}}`,
			"/patternProperties/%28a%29%5C1", "invalid escape sequence: `\\1`"},
		{`{"$defs":{"d":{"items":{"pattern":"^ok$"}},"e":{"not":{"pattern":"(?=x)abc"}}}}`,
			"/$defs/e/not/pattern", "invalid or unsupported Perl syntax: `(?=`"},
	}
	for _, c := range cases {
		_, err := compileRequestSchema([]byte(c.schema), "response_format.json_schema")
		var pe *SchemaPatternError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a *SchemaPatternError", c.schema, err)
			continue
		}
		msg := err.Error()
		for _, want := range []string{
			"schema response_format.json_schema: the pattern at " + c.at + " cannot be used: " + c.why,
			"patterns are Go (RE2) regular expressions: no lookahead, lookbehind or backreferences",
			`rewrite it, or use "format"`,
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q, want it to say %q", c.schema, msg, want)
			}
		}
	}
}

// A pattern in data (an enum value, an example) is no schema keyword: the
// compiler never parses it unless a "$ref" points there, so it is not
// refused.
func TestRequestSchemaPatternInDataIsNotRefused(t *testing.T) {
	for _, schema := range []string{
		`{"enum":[{"pattern":"(?=x)abc"}]}`,
		`{"type":"object","examples":[{"pattern":"([a-z"}]}`,
	} {
		if _, err := compileRequestSchema([]byte(schema), "r"); err != nil {
			t.Errorf("%s: %v", schema, err)
		}
	}
}
