package prompt_test

import (
	"strings"
	"testing"
)

// Ordering (lt, le, gt, ge) an optional key the caller left out, or sent as
// null, is a render error that names the call and its place, the key, whether
// it is absent or null, that the prompt is at fault and the guards to write
// (it was text/template's bare "error calling gt: invalid type for
// comparison"; rprompt10 F2). eq and ne of such a key still render.
func TestRender_OrderingANullSaysWhichKeyAndTheGuard(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"},"discount":{"type":["number","null"]},"o":{"type":["object","null"]}},"required":["q"]}`
	for _, c := range []struct {
		content, input string
		want           []string
	}{
		{`{{ if gt .discount 0 }}off{{ end }}`, `{"q":"x"}`, []string{"{{ gt .discount 0 }} (content line 1, column 31) orders .discount", "absent in the input (optional",
			"the prompt is at fault", "{{ if and .discount (gt .discount 0) }}", "{{ with .discount }}", "(default 0 .discount)"}},
		{`{{ if lt 5 .discount }}off{{ end }}`, `{"q":"x","discount":null}`, []string{"{{ lt 5 .discount }}", "orders .discount, but .discount is null in the input (the caller sent null)",
			"the prompt is at fault", "{{ if and .discount (lt 5 .discount) }}"}},
		{`{{ if ge $.discount 1 }}off{{ end }}`, `{"q":"x"}`, []string{"{{ ge $.discount 1 }}", "orders $.discount", "absent in the input"}},
		{`{{ if le .o.n 1 }}off{{ end }}`, `{"q":"x","o":{"n":null}}`, []string{"{{ le .o.n 1 }}", "orders .o.n", "null in the input"}},
		{`{{ with .q }}{{ if gt $.discount 0 }}off{{ end }}{{ end }}`, `{"q":"x"}`, []string{"{{ gt $.discount 0 }}", "absent in the input"}},
		{`{{ if .discount | gt 0 }}off{{ end }}`, `{"q":"x"}`, []string{"{{ gt 0 }}", "orders the value piped into it", "null or absent in the input", "the prompt is at fault"}},
	} {
		content := `Answer in JSON: {{ .q }}` + c.content
		m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
		set, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		p, _ := set.Get("p", "")
		if err := p.ValidateInput([]byte(c.input)); err != nil {
			t.Fatalf("%s: the input matches the input schema, but: %v", c.input, err)
		}
		_, err = p.Render([]byte(c.input))
		if err == nil {
			t.Fatalf("%s over %s rendered", c.content, c.input)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s over %s: %v\nwant %q in it", c.content, c.input, err, w)
			}
		}
	}
}

// The guards the refusal names render for an absent, a null and a present
// key alike, and eq of such a key is false.
func TestRender_TheGuardsForOrderingANullRender(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"},"discount":{"type":["number","null"]}},"required":["q"]}`
	content := `Answer in JSON: {{ .q }}{{ if and .discount (gt .discount 0) }} A{{ end }}{{ with .discount }}{{ if gt . 0 }} W{{ end }}{{ end }}` +
		`{{ if gt (default 0 .discount) 0 }} D{{ end }}{{ if eq .discount 0 }} Z{{ end }}`
	m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
	set, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, _ := set.Get("p", "")
	for input, want := range map[string]string{`{"q":"x"}`: "Answer in JSON: x", `{"q":"x","discount":null}`: "Answer in JSON: x",
		`{"q":"x","discount":5}`: "Answer in JSON: x A W D"} {
		msgs, err := p.Render([]byte(input))
		if err != nil || msgs[0].Content != want {
			t.Errorf("%s: %v %v, want %q", input, msgs, err, want)
		}
	}
}
