package prompt_test

import (
	"strings"
	"testing"
)

// An input schema that no JSON object can match loaded, and then every job
// was refused (a job's input is always an object). It is refused at load,
// naming the field and the fix. Found by review.
func TestInputSchemaThatAdmitsNoObjectIsRefused(t *testing.T) {
	m := manifestWith("input_schema: in.json\n")
	for _, in := range []string{
		`{"type":"array"}`,
		`false`,
		`{"type":"string"}`,
		`{"type":["string","null"]}`,
		`{"allOf":[{"type":"object"},false]}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"type":"array"}}}`,
	} {
		_, file, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
		if err == nil || !strings.Contains(err.Error(), file+": input_schema: schema ") || !strings.Contains(err.Error(), `admits no JSON object`) || !strings.Contains(err.Error(), `give the root "type": "object"`) {
			t.Errorf("%s: LoadDir = %v", in, err)
		}
	}
	for _, in := range []string{`{"type":"object"}`, `{"type":["object","null"]}`, `true`, `{}`, `{"properties":{"q":{"type":"string"}}}`} {
		if _, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in}); err != nil {
			t.Errorf("%s: LoadDir = %v", in, err)
		}
	}
}
