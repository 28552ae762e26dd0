package chat

import (
	"strings"
	"testing"
)

// A response_format schema with a pattern Go cannot parse (a lookahead,
// valid ECMA-262) was a 400 saying "the JSON Schema does not compile: …
// '(?=x)abc' is not valid 'regex'". It says which pattern, why, and that
// patterns are RE2; it was never compiled.
func TestNormalizeSaysWhyAPatternCannotBeUsed(t *testing.T) {
	r := parse(t, `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":`+
		`{"name":"r","schema":{"type":"object","properties":{"summary":{"type":"string","pattern":"(?=x)abc"}}}}}}`)
	_, err := r.Normalize()
	re, ok := err.(*RequestError)
	if !ok || re.Param != "response_format.json_schema.schema" {
		t.Fatalf("%v: want a RequestError on response_format.json_schema.schema", err)
	}
	if strings.Contains(re.Message, "does not compile") ||
		!strings.Contains(re.Message, "the pattern at /properties/summary/pattern cannot be used: invalid or unsupported Perl syntax: `(?=`") ||
		!strings.Contains(re.Message, "Go (RE2) regular expressions") {
		t.Errorf("message %q: want which pattern cannot be used and why, not that the schema does not compile", re.Message)
	}
}
