package prompt_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// The load check finds "JSON" in every branch, unused define and string
// literal of a json_object prompt's templates; some inputs render messages
// without it, which OpenAI-compatible providers refuse (400, blamed on the
// caller). Render refuses them, as the prompt's fault. Found by review.
func TestJSONObjectWordMayBeMissingFromTheRenderedMessages(t *testing.T) {
	for _, c := range []struct{ content, input string }{
		{`{{ if .strict }}Answer in JSON. {{ end }}{{ .q }}`, `{"q":"hi","strict":false}`},
		{`{{ default "Answer in JSON" .q }}`, `{"q":"hi"}`},
		{`{{ define "unused" }}JSON{{ end }}{{ .q }}`, `{"q":"hi"}`},
	} {
		m := strings.Replace(manifestWith("response_format: json_object\n"), `"Answer in JSON: {{ .q }}"`, `'`+c.content+`'`, 1)
		set, _, err := loadOne(t, m, nil)
		if err != nil {
			continue // refused at load: fine
		}
		p, err := set.Get("p", "")
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := p.Render(json.RawMessage(c.input))
		if err != nil {
			var re *prompt.RenderError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "the prompt is at fault, not the input") {
				t.Errorf("%s over %s: %v, want a RenderError blaming the prompt", c.content, c.input, err)
			}
			continue // refused at render: fine
		}
		var all string
		for _, m := range msgs {
			all += m.Content
		}
		if !strings.Contains(strings.ToLower(all), "json") {
			t.Errorf("%s loads and renders %q for %s: no \"JSON\" in a json_object request", c.content, all, c.input)
		}
	}
}

// The word printed by a branch the input takes, by a literal a function
// prints, or by the input itself, is there: render lets it through. A
// prompt without the word anywhere is still refused at load.
func TestJSONObjectWordRenderedPasses(t *testing.T) {
	for _, c := range []struct{ content, input string }{
		{`{{ if .strict }}Answer in JSON. {{ end }}{{ .q }}`, `{"q":"hi","strict":true}`},
		{`{{ default "Answer in JSON" .q }}`, `{"q":""}`},
		{`{{ if .strict }}Answer in json. {{ end }}{{ .q }}`, `{"q":"reply with a Json object","strict":false}`},
		{`Reply as jSoN. {{ .q }}`, `{"q":"hi"}`},
	} {
		m := strings.Replace(manifestWith("response_format: json_object\n"), `"Answer in JSON: {{ .q }}"`, `'`+c.content+`'`, 1)
		set, _, err := loadOne(t, m, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.content, err)
		}
		p, _ := set.Get("p", "")
		if _, err := p.Render(json.RawMessage(c.input)); err != nil {
			t.Errorf("%s over %s: %v", c.content, c.input, err)
		}
	}
	m := strings.Replace(manifestWith("response_format: json_object\n"), `"Answer in JSON: {{ .q }}"`, `'{{ .q }}'`, 1)
	if _, _, err := loadOne(t, m, nil); err == nil || !strings.Contains(err.Error(), `json_object needs the word "JSON"`) {
		t.Fatalf("a json_object prompt without the word loads: %v", err)
	}
}

// Other formats do not need the word.
func TestJSONWordNotNeededOutsideJSONObject(t *testing.T) {
	for _, format := range []string{"", "response_format: none\n"} {
		m := strings.Replace(manifestWith(format), `"Answer in JSON: {{ .q }}"`, `'{{ .q }}'`, 1)
		set, _, err := loadOne(t, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := set.Get("p", "")
		if _, err := p.Render(json.RawMessage(`{"q":"hi"}`)); err != nil {
			t.Errorf("%q: %v", format, err)
		}
	}
}
