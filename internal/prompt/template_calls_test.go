package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// {{ template "x" }} with x defined nowhere loaded, and then every job failed
// to render, refused as the caller's fault. It is refused at load, naming the
// message, the call and where it is. Found by review.
func TestUndefinedTemplateCallIsRefusedAtLoad(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{`Answer in JSON. {{ template "x" }}`, `{{ template "x" }} (content line 1, column 29) calls a template defined nowhere in this message`},
		{`Answer in JSON. {{ if .q }}{{ template "y" . }}{{ end }}`, `{{ template "y" }} (content line 1, column 40)`},
		{`Answer in JSON. {{ define "a" }}{{ template "z" }}{{ end }}{{ template "a" }}`, `{{ template "z" }}`},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+c.content+`'`, 1)
		_, file, err := loadOne(t, m, nil)
		if err == nil || !strings.Contains(err.Error(), file+": messages[0].content: "+c.want) || !strings.Contains(err.Error(), `{{ define`) {
			t.Errorf("%s: LoadDir = %v", c.content, err)
		}
	}
}

// A call of a template the message defines (with define or block) loads and
// renders.
func TestDefinedTemplateCallsLoad(t *testing.T) {
	m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'{{ define "a" }}Q: {{ .q }}{{ end }}Answer in JSON. {{ template "a" . }} {{ block "b" . }}B{{ end }}'`, 1)
	set, _, err := loadOne(t, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render(json.RawMessage(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Answer in JSON. Q: x B"; msgs[0].Content != want {
		t.Fatalf("rendered %q, want %q", msgs[0].Content, want)
	}
}
