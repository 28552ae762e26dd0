package prompt_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// A message whose own text says "<no value>" loaded, and then every render
// failed with `rendered "<no value>": the template prints a value that is
// null or absent`: the API answers that 422 invalid-input, blaming every
// caller for the manifest. It is refused at load, naming the message. Found by
// review.
func TestStaticNoValueTextIsNotBlamedOnEveryInput(t *testing.T) {
	for _, content := range []string{
		`"Answer in JSON. Write <no value> for a field the ticket does not give. Ticket: {{ .q }}"`,
		`"Answer in JSON: {{ .q }}{{ if .q }} or <no value>{{ end }}"`,
		`"Answer in JSON: {{ .q }} {{/* a comment */}}<no value>"`,
		`'Answer in JSON: {{ .q }} {{ "<no value>" }}'`,
		`'Answer in JSON: {{ .q }} {{ print "<no" " value>" }}'`, // printed by the template, not its text: refused at render
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, content, 1)
		set, file, err := loadOne(t, m, nil)
		if err != nil {
			var le *prompt.LoadError
			if !errors.As(err, &le) || len(le.Problems) != 1 {
				t.Errorf("%s: want one load problem, got %v", content, err)
				continue
			}
			for _, want := range []string{file + ": messages[0].content: ", "<no value>", "write it another way"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: the load error lacks %q: %v", content, want, err)
				}
			}
			continue
		}
		p, err := set.Get("p", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Render(json.RawMessage(`{"q":"my card was charged twice"}`)); err != nil && !strings.Contains(content, "print") {
			t.Errorf("%s: the prompt loads, but a complete input is refused: %v", content, err)
		}
	}
}
