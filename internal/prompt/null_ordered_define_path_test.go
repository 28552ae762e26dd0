package prompt_test

import (
	"strings"
	"testing"
)

// Ordering a null inside a {{ define }}: dot and $ there are what the
// {{ template }} call passes. Called once from the message with an input
// path, the refusal follows the read from there and names the input path and
// its state; called from two places, it says the key is null or absent in
// the value the call passes, and never reads the input's top level as if dot
// were the input.
func TestRender_OrderingNullInDefinedTemplateNamesThePath(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"},"discount":{"type":["number","null"]},"customer":{"type":"object"},"other":{"type":"object"}},"required":["q"]}`
	for _, c := range []struct {
		content, input string
		want           []string
	}{
		{`{{ define "c" }}{{ if gt .discount 0 }} (discounted){{ end }}{{ end }}Answer in JSON: {{ .q }}{{ template "c" .customer }}`,
			`{"q":"x","discount":1,"customer":{"discount":null}}`,
			[]string{`.customer.discount in the input`, `passes .customer to {{ define "c" }}`, `is null in the input (the caller sent null)`}},
		{`{{ define "c" }}{{ if gt $.discount 0 }} (discounted){{ end }}{{ end }}Answer in JSON: {{ .q }}{{ template "c" $.customer }}`,
			`{"q":"x","customer":{"discount":null}}`,
			[]string{`.customer.discount in the input`, `passes $.customer`, `is null in the input`}},
		{`{{ define "c" }}{{ if gt .discount 0 }} (discounted){{ end }}{{ end }}Answer in JSON: {{ .q }}{{ template "c" .customer }}{{ template "c" .other }}`,
			`{"q":"x","customer":{"discount":null},"other":{"discount":null}}`,
			[]string{`.discount is null or absent in the value {{ template "c" }} was called with`, `not the input`}},
	} {
		m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'`+c.content+`'`, 1)
		set, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		p, _ := set.Get("p", "")
		if err := p.ValidateInput([]byte(c.input)); err != nil {
			t.Fatalf("premise: %v", err)
		}
		_, rerr := p.Render([]byte(c.input))
		if rerr == nil {
			t.Fatalf("%s: premise: ordering a null renders", c.input)
		}
		for _, w := range c.want {
			if !strings.Contains(rerr.Error(), w) {
				t.Errorf("%s over %s: the refusal does not say %q: %v", c.content, c.input, w, rerr)
			}
		}
		if strings.Contains(rerr.Error(), "did not send it") {
			t.Errorf("%s over %s: the refusal reads the input's top level: %v", c.content, c.input, rerr)
		}
	}
}
