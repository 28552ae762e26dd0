package prompt_test

import (
	"strings"
	"testing"
)

const closedInput = `{"type":"object","required":["subject"],"properties":{"subject":{"type":"string"},"body":{"type":"string"},"items":{"type":"array"}},"additionalProperties":false}`

func templateManifest(contents ...string) string {
	m := "name: p\nversion: \"1\"\nmax_tokens: 10\noutput_schema: out.json\ninput_schema: in.json\nmessages:\n"
	for _, c := range contents {
		m += "  - role: user\n    content: '" + c + "'\n"
	}
	return m
}

// A template key that a closed input schema (additionalProperties: false)
// can never supply is a load error: otherwise every job fails to render and
// is refused as invalid input, the caller blamed for the manifest's typo.
func TestLoadDir_TemplateKeyTheInputCannotHold(t *testing.T) {
	tests := []struct {
		name     string
		contents []string
		in       string
		want     []string // problems, without the file; none: loads
	}{
		{"typo", []string{"Subject: {{ .subjct }}"}, closedInput, []string{
			`messages[0].content: {{ .subjct }} (content line 1, column 13) reads "subjct", which the input schema in.json never allows ("additionalProperties": false and not in "properties"), so every job that reaches it would fail to render; did you mean "subject"? (declared: body, items, subject)`}},
		{"each message, each name once", []string{"ok {{ .subject }}", "{{ .bdy }} {{ if .bdy }}{{ .subject.x }}{{ end }}{{ .sujbect }}"}, closedInput, []string{
			`messages[1].content: {{ .bdy }} (content line 1, column 4) reads "bdy"`,
			`messages[1].content: {{ .sujbect }} (content line 1, column 53) reads "sujbect"`}},
		{"in pipes, if and else", []string{`{{ printf "%s" .tpyo | upper }}{{ if .subject }}x{{ else }}{{ .els }}{{ end }}`}, closedInput, []string{
			`reads "tpyo"`, `reads "els"`}},
		{"range and with bodies read their element, their else branches the input", []string{
			"{{ range .items }}{{ .name }}{{ else }}{{ .nothing }}{{ end }}{{ with .body }}{{ .len }}{{ else }}{{ .nobody }}{{ end }}"}, closedInput, []string{
			`reads "nothing"`, `reads "nobody"`}},
		{"$ is the input everywhere", []string{"{{ range .items }}{{ $.subjet }}{{ end }}"}, closedInput, []string{`{{ $.subjet }} (content line 1, column 22) reads "subjet"`}},
		{"variables and chains", []string{"{{ $s := .sbj }}{{ (.bod).x }}"}, closedInput, []string{`reads "sbj"`, `reads "bod"`}},
		{"no properties", []string{"{{ .a }}"}, `{"type":"object","additionalProperties":false}`, []string{`reads "a", which the input schema in.json never allows ("additionalProperties": false and not in "properties"), so every job that reaches it would fail to render; the schema declares no properties`}},
		{"open schema", []string{"{{ .anything }}"}, `{"type":"object","properties":{"subject":{}}}`, nil},
		{"patternProperties", []string{"{{ .x_1 }}"}, `{"type":"object","patternProperties":{"^x_":{}},"additionalProperties":false}`, nil},
		{"declared keys", []string{"{{ .subject }}{{ index . \"other\" }}{{ range .items }}{{ .other }}{{ end }}"}, closedInput, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, file, err := loadOne(t, templateManifest(tc.contents...), map[string]string{"out.json": outSchema, "in.json": tc.in})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			got := problemsOf(t, err, file)
			if len(got) != len(tc.want) {
				t.Fatalf("want %d problems, got:\n%s", len(tc.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("problem %d:\n%s\nwant it to contain\n%s", i, got[i], tc.want[i])
				}
			}
		})
	}
}
