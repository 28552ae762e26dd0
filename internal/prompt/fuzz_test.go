package prompt_test

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// FuzzRender: rendering any input never panics and is deterministic; input
// that passes a prompt's input schema renders, into one non-empty message per
// template with the manifest's roles, and rendering it from its parsed value
// (RenderParsed) gives the same messages and leaves that value as it was.
func FuzzRender(f *testing.F) {
	set, err := prompt.LoadDir("../../prompts")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"subject":"Login","body":"I cannot log in since yesterday."}`,
		`{"subject":"{{ .body }}","body":"<no value>","customer_tier":"pro"}`,
		`{"subject":" ","body":"\u0000\ud800"}`,
		`{"text":"INV-1 total 10.00"}`, `{"text":1e999}`, `{}`, `[]`, `null`, `{"subject":null,"body":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		for _, p := range set.All() {
			msgs, err := p.Render(input)
			again, err2 := p.Render(input)
			if (err == nil) != (err2 == nil) || !reflect.DeepEqual(msgs, again) {
				t.Fatalf("%s: rendering is not deterministic", p.ID())
			}
			if p.ValidateInput(input) != nil {
				continue
			}
			m, perr := p.ParseInput(input)
			if perr != nil {
				t.Fatalf("%s: input passes the input schema but does not parse: %v", p.ID(), perr)
			}
			before := maps.Clone(m)
			fromParsed, err3 := p.RenderParsed(m, input)
			if fmt.Sprint(err) != fmt.Sprint(err3) || !reflect.DeepEqual(msgs, fromParsed) {
				t.Fatalf("%s: RenderParsed gives %q, %v; Render gives %q, %v", p.ID(), fromParsed, err3, msgs, err)
			}
			if !reflect.DeepEqual(m, before) {
				t.Fatalf("%s: RenderParsed modified its input: %v, was %v", p.ID(), m, before)
			}
			if err != nil {
				t.Fatalf("%s: input passes the input schema but does not render: %v", p.ID(), err)
			}
			if len(msgs) != len(p.Messages) {
				t.Fatalf("%s: %d messages, want %d", p.ID(), len(msgs), len(p.Messages))
			}
			for i, m := range msgs {
				if m.Role != p.Messages[i].Role || strings.TrimSpace(m.Content) == "" {
					t.Fatalf("%s: message %d is %q/%q", p.ID(), i, m.Role, m.Content)
				}
			}
		}
	})
}
