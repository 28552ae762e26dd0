package prompt_test

import (
	"strings"
	"testing"
)

// docs/prompts.md §2: optional keys are "present as null when absent, so
// {{ default ... }}, {{ if .x }} and {{ with .x }} work", and a read of a key
// an input can never hold does not load. For an input schema whose variants
// are a oneOf (a tagged union, closed with unevaluatedProperties: false as
// §2 recommends for composed schemas), the load check admits reads of the
// keys declared in the branches (an input may hold them) — but those keys
// are not made optional: the guard the docs give, {{ if .order_id }} or
// {{ with .email }}, fails every input of the other variant with
// text/template's bare `map has no entry for key "email"`, and the job is
// refused 422 invalid-input as if the caller had sent a bad input — though
// the input matched the schema, and nothing says the prompt is at fault.
func TestRender_BranchKeyGuardedByIf(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],
	 "oneOf":[{"properties":{"order_id":{"type":"string"}},"required":["order_id"]},{"properties":{"email":{"type":"string"}},"required":["email"]}],
	 "unevaluatedProperties":false}`
	content := `Answer in JSON: {{ .q }}{{ if .order_id }} order {{ .order_id }}{{ end }}{{ with .email }} account {{ . }}{{ end }}`
	m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
	set, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
	if err != nil {
		return // refused at load, saying the read cannot be guarded so: acceptable too
	}
	p, _ := set.Get("p", "")
	for _, input := range []string{`{"q":"x","order_id":"A1"}`, `{"q":"x","email":"a@example.com"}`} {
		if err := p.ValidateInput([]byte(input)); err != nil {
			t.Fatalf("%s: premise: %v", input, err)
		}
		if _, err := p.Render([]byte(input)); err != nil {
			t.Errorf("%s matches the input schema, and the template guards the read with if/with, yet the job is refused: %v", input, err)
		}
	}
}
