package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A prompt's schema asserts "format", so a name the router does not know
// (which the library ignores) is refused, naming the closest known one; a
// caller's schema keeps the standard's rule (an unknown format is an
// annotation) and compiles.
func TestCompileSchemaRefusesAnUnknownFormat(t *testing.T) {
	for format, near := range map[string]string{"datetime": "date-time", "Date": "date", "e-mail": "email", "url": "uri", "UUID": "uuid"} {
		schema := []byte(`{"type":"object","properties":{"a":{"items":{"type":"string","format":"` + format + `"}}}}`)
		_, err := contract.CompileSchema(schema, "out.json")
		if err == nil || !strings.Contains(err.Error(), `format "`+format+`" at #/properties/a/items`) || !strings.Contains(err.Error(), `did you mean "`+near+`"?`) ||
			!strings.Contains(err.Error(), "date-time, duration, email") {
			t.Errorf("%s: %v", format, err)
		}
		if _, err := contract.CompileSelfContainedSchema(schema, "out.json"); err == nil || !strings.Contains(err.Error(), `did you mean "`+near+`"?`) {
			t.Errorf("%s, self-contained: %v", format, err)
		}
		if _, err := contract.CompileRequestSchema(schema, "response_format.json_schema"); err != nil {
			t.Errorf("%s in a caller's schema: %v", format, err)
		}
	}
	// Far from every known name: no guess, the list.
	if _, err := contract.CompileSchema([]byte(`{"format":"int32"}`), ""); err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "the formats checked are") {
		t.Errorf("int32: %v", err)
	}
	for _, known := range []string{"date-time", "date", "email", "uri", "uuid", "ipv4", "regex"} {
		if _, err := contract.CompileSchema([]byte(`{"format":"`+known+`"}`), ""); err != nil {
			t.Errorf("%s: %v", known, err)
		}
	}
}
