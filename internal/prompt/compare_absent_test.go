package prompt_test

import (
	"strings"
	"testing"
)

// An optional key (declared by the input schema, not required) that the
// caller leaves out is present as null "so that default, if and with work"
// (docs/prompts.md §2). Ordering it ({{ if gt .discount 0 }}) fails the
// render, and the job is refused 422 invalid-input, with text/template's
// bare "error calling gt: invalid type for comparison": it names neither
// the key, nor that it is absent (or null), nor that the prompt is at fault,
// nor the guard to write — where every other read of an absent optional key
// (printf, print, .key.field, a printed null) says all of that. The input
// matched the input schema; the caller cannot tell what to change.
func TestRender_OrderingAbsentOptionalKeySaysWhatAndHow(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"},"discount":{"type":["number","null"]}},"required":["q"]}`
	for _, op := range []string{"gt", "lt", "ge", "le"} {
		content := `Answer in JSON: {{ .q }}{{ if ` + op + ` .discount 0 }} (discounted){{ end }}`
		m := strings.Replace(manifestWith("input_schema: in.json\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
		set, _, err := loadOne(t, m, map[string]string{"out.json": outSchema, "in.json": in})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		p, _ := set.Get("p", "")
		for _, input := range []string{`{"q":"x"}`, `{"q":"x","discount":null}`} {
			if err := p.ValidateInput([]byte(input)); err != nil {
				t.Fatalf("%s: the input matches the input schema, but: %v", input, err)
			}
			_, err := p.Render([]byte(input))
			if err == nil {
				continue // rendering it (as false) would be fine too
			}
			msg := err.Error()
			if !strings.Contains(msg, "discount") || !(strings.Contains(msg, "absent") || strings.Contains(msg, "null")) {
				t.Errorf("%s over %s: the refusal does not say that discount is absent or null (nor how to guard it): %s", op, input, msg)
			}
		}
	}
}
