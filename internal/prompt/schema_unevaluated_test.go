package prompt_test

import (
	"strings"
	"testing"
)

// An input schema closed with a top-level "unevaluatedProperties": false
// (draft 2020-12, the default, or 2019-09) is closed for the load check of
// template reads, as one closed with "additionalProperties": false: a read
// of a key declared in no "properties" it sees does not load, naming the
// read, how the schema closes it and the closest name; keys declared beside
// a "$ref", in "allOf" members and in branches are allowed (rprompt10 F3).
func TestLoadDir_UnevaluatedPropertiesFalseClosesTheInput(t *testing.T) {
	const base = `"$defs":{"who":{"properties":{"customer":{"type":"string"}}}},"allOf":[{"$ref":"#/$defs/who"}],` +
		`"anyOf":[{"properties":{"tier":{"type":"string"}}},true],"unevaluatedProperties":false`
	load := func(schema, content string) error {
		t.Helper()
		m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'Answer in JSON: `+content+`'`, 1)
		_, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": schema})
		return err
	}
	for _, s := range []string{
		`{"type":"object","properties":{"subject":{"type":"string"}},` + base + `}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"subject":{"type":"string"}},` + base + `}`,
	} {
		err := load(s, `{{ .subjct }}`)
		if err == nil {
			t.Fatalf("%s: a read of subjct, which the closed schema never admits, loaded", s)
		}
		for _, want := range []string{`{{ .subjct }}`, `reads "subjct"`, `"unevaluatedProperties": false`, `did you mean "subject"?`, "declared: customer, subject, tier"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("load error %v\nwant %q in it", err, want)
			}
		}
		if err := load(s, `{{ .subject }} {{ .customer }} {{ .tier }}`); err != nil {
			t.Errorf("reads of keys the schema declares (beside a $ref, in allOf, in anyOf): %v", err)
		}
	}
	// Schemas that may admit another key, or whose closure the check does
	// not follow, leave it off: the read loads (and is refused at render, if
	// ever, as before).
	for _, s := range []string{
		`{"type":"object","$defs":{"a":{"$anchor":"w","properties":{"subject":{}}}},"allOf":[{"$ref":"#w"}],"unevaluatedProperties":false}`,
		`{"type":"object","properties":{"subject":{"type":"string"}},"patternProperties":{"^x-":{}},"unevaluatedProperties":false}`,
		`{"type":"object","allOf":[{"patternProperties":{"^x-":{}}}],"unevaluatedProperties":false}`,
		`{"type":"object","allOf":[{"additionalProperties":true}],"unevaluatedProperties":false}`,
		`{"type":"object","properties":{"subject":{"type":"string"}},"unevaluatedProperties":{"type":"string"}}`,
	} {
		if err := load(s, `{{ .subjct }}`); err != nil {
			t.Errorf("%s: %v; want it loaded (the schema may admit subjct, or the check cannot tell)", s, err)
		}
	}
}
