package prompt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"text/template"
)

// TestStaticText: a message without actions renders from its text, copied,
// exactly as executing its template would render it; one with actions, or
// whose text render would refuse, is executed every time.
func TestStaticText(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"plain, trailing whitespace trimmed", "You triage tickets.\n  Answer in \"JSON\" <b>&</b>.\n\n \t", "You triage tickets.\n  Answer in \"JSON\" <b>&</b>."},
		{"leading whitespace kept", "  indented\n", "  indented"},
		{"a comment is no action", "before {{/* a note */}}after", "before after"},
		{"an action", "Subject: {{ .subject }}", ""},
		{"a constant action", `{{ "x" }}`, ""},
		{"a trim marker around a comment", "a  {{- /* c */ -}}  b", "ab"},
		{"blank", " \n\t", ""},
		{"the text render refuses", "say <no value>", ""},
	}
	for _, tc := range cases {
		tmpl := template.Must(template.New(tc.name).Option("missingkey=error").Funcs(funcs).Parse(tc.text))
		got := staticText(tmpl)
		if got != tc.want {
			t.Errorf("%s: staticText = %q, want %q", tc.name, got, tc.want)
		}
		if got == "" {
			continue
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, map[string]any{}); err != nil {
			t.Fatal(err)
		}
		if executed := strings.TrimRight(b.String(), " \t\r\n"); executed != got {
			t.Errorf("%s: staticText %q, but the template renders %q", tc.name, got, executed)
		}
	}
}

// TestShippedSystemMessageIsStatic: the shipped triage prompt's system
// message is copied, not executed, and renders as before.
func TestShippedSystemMessageIsStatic(t *testing.T) {
	set, err := LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.static[0] == "" || p.static[1] != "" {
		t.Fatalf("static texts %q: want the system message's text and none for the user message (it has actions)", p.static)
	}
	msgs, err := p.Render(json.RawMessage(`{"subject":"s","body":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimRight(p.Messages[0].Content, " \t\r\n"); msgs[0].Content != want {
		t.Fatalf("system message rendered %q, want its text %q", msgs[0].Content, want)
	}
}
