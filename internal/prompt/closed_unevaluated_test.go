package prompt_test

import (
	"strings"
	"testing"
)

// docs/prompts.md §2: "When the input_schema is closed ... every key a
// template reads by name must be in that schema's top-level properties, or
// the manifest does not load: such a key can never be in an input, so every
// job that reaches the read ... would fail to render and be refused as the
// caller's fault." A draft 2020-12 schema closed with
// "unevaluatedProperties": false (the way to close a schema whose properties
// come partly from an allOf/$ref, where additionalProperties: false would
// refuse those) refuses every undeclared key just the same, but the load
// check only recognises additionalProperties, so a misspelt read loads and
// every job is refused 422 invalid-input, blamed on the caller.
func TestLoadDir_ClosedByUnevaluatedPropertiesChecksTemplateKeys(t *testing.T) {
	in := `{"type":"object","properties":{"subject":{"type":"string"}},"required":["subject"],"unevaluatedProperties":false}`
	content := `Answer in JSON: {{ .subjct }}`
	m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
	set, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
	if err != nil {
		return // refused at load, naming the read: what the docs promise for a closed schema
	}
	p, _ := set.Get("p", "")
	// Every input the schema admits lacks "subjct", and one that has it is refused by the schema.
	if err := p.ValidateInput([]byte(`{"subject":"hi","subjct":"hi"}`)); err == nil {
		t.Fatal("the schema admits subjct: the test's premise is wrong")
	}
	_, rerr := p.Render([]byte(`{"subject":"hi"}`))
	t.Errorf("a manifest that reads a key its closed input schema never admits loaded; every job is refused at render as the caller's fault: %v", rerr)
}
