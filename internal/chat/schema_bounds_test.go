package chat

import (
	"fmt"
	"strings"
	"testing"
)

// A response_format.json_schema beyond the bounds on a caller's schema (here
// 5,001 properties, and 6,001 anyOf branches, which would take the compiler
// seconds) is a request error on response_format.json_schema.schema that
// says which bound and by how much, not that the schema "does not compile":
// it was never compiled. One within them is taken.
func TestNormalizeRefusesASchemaBeyondTheBounds(t *testing.T) {
	request := func(schema string) *Request {
		return parse(t, `{"model":"m","messages":[{"role":"user","content":"x"}],`+
			`"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":`+schema+`}}}`)
	}
	props := func(n int, schema string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"p%d":%s`, i, schema)
		}
		return `{"type":"object","properties":{` + strings.Join(parts, ",") + `}}`
	}
	for schema, want := range map[string]string{
		props(5001, `{"type":"string"}`):                                           "it has 5001 object properties in all, at most 5000 are allowed",
		`{"anyOf":[` + strings.TrimSuffix(strings.Repeat(`{},`, 6001), ",") + `]}`: "it holds 6001 subschemas, at most 6000 are allowed",
	} {
		_, err := request(schema).Normalize()
		re, ok := err.(*RequestError)
		if !ok || re.Param != "response_format.json_schema.schema" {
			t.Fatalf("%v: want a RequestError on response_format.json_schema.schema", err)
		}
		if !strings.HasPrefix(re.Message, "schema response_format.json_schema is beyond the bounds on a schema sent with a request: ") ||
			!strings.Contains(re.Message, want) || strings.Contains(re.Message, "does not compile") {
			t.Errorf("message %q: want it to say the schema is beyond the bounds (%q), not that it does not compile", re.Message, want)
		}
	}
	if _, err := request(props(1000, `{"type":["string","null"]}`)).Normalize(); err != nil {
		t.Fatalf("1,000 properties: %v", err)
	}
}
