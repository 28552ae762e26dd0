package prompt_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// The bound is on all the messages together: a prompt that renders exactly
// MaxRenderedBytes renders; one byte more, in a later message, is a
// RenderError naming that message, the bound and the fix.
func TestRenderBoundCountsEveryMessage(t *testing.T) {
	set, _, err := loadOne(t, `name: p
version: "1"
max_tokens: 100
output_schema: out.json
messages:
  - role: system
    content: Answer in JSON.
  - role: user
    content: "{{ .a }}"
  - role: user
    content: "{{ .b }}"
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	half := prompt.MaxRenderedBytes / 2
	render := func(extra int) ([]string, error) {
		input, _ := json.Marshal(map[string]string{"a": strings.Repeat("a", half-len("Answer in JSON.")), "b": strings.Repeat("b", half+extra)})
		msgs, err := p.Render(input)
		var out []string
		for _, m := range msgs {
			out = append(out, m.Content)
		}
		return out, err
	}
	if msgs, err := render(0); err != nil || len(msgs) != 3 {
		t.Fatalf("a prompt of exactly %d bytes: %d messages, %v; want it rendered", prompt.MaxRenderedBytes, len(msgs), err)
	}
	_, err = render(1)
	var re *prompt.RenderError
	if !errors.As(err, &re) || re.Field != "messages[2].content" ||
		!strings.Contains(err.Error(), "the rendered prompt passes 16 MiB (16777216 bytes, all messages together)") ||
		!strings.Contains(err.Error(), "send a smaller input") {
		t.Fatalf("one byte more: %v; want a RenderError on messages[2].content naming the bound and the fix", err)
	}
}
