package prompt_test

import (
	"strings"
	"testing"
)

// docs/prompts.md §2: ordering a null or an absent optional key is a render
// error that names "the key, whether it is absent or null, and that the
// prompt is at fault". Inside a {{ define }} called with a part of the input
// ({{ template "c" .customer }}), dot is .customer, not the input; but the
// explanation looks the key up in the input's top level, as if dot were the
// input. The caller sent "customer": {"discount": null}; the refusal says
// .discount "is absent in the input (optional: the input schema does not
// require it and the caller did not send it)" — reading the top-level
// optional key — and the author goes looking for a top-level key the caller
// is not meant to send.
func TestRender_OrderingNullInDefinedTemplateSaysNull(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"},"discount":{"type":["number","null"]},"customer":{"type":"object"}},"required":["q"]}`
	content := `{{ define "c" }}{{ if gt .discount 0 }} (discounted){{ end }}{{ end }}Answer in JSON: {{ .q }}{{ template "c" .customer }}`
	m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
	set, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, _ := set.Get("p", "")
	input := `{"q":"x","customer":{"discount":null}}`
	if err := p.ValidateInput([]byte(input)); err != nil {
		t.Fatalf("the input matches the input schema, but: %v", err)
	}
	_, rerr := p.Render([]byte(input))
	if rerr == nil {
		t.Fatal("premise: ordering a null renders")
	}
	if msg := rerr.Error(); strings.Contains(msg, "absent") && strings.Contains(msg, "did not send it") {
		t.Errorf("the caller sent customer.discount as null, but the refusal says the key is absent and was not sent: %s", msg)
	}
}
