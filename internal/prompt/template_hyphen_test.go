package prompt_test

import (
	"strings"
	"testing"
)

// A key with a hyphen read by name ({{ .customer-tier }}) did not load with
// text/template's bare "bad character U+002D '-'", which names neither the
// read nor the fix. The refusal names the read, its place in the content and
// the index call that reads it.
func TestLoadNamesAKeyWithAHyphenAndHowToReadIt(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{`{{ .customer-tier }}`, `.customer-tier (content line 1, column 20) reads the key "customer-tier", ` +
			`but a template reads a key by name only when the name is letters, digits and '_': it stops at the '-' (text/template: bad character U+002D '-'); ` +
			`write {{ index . "customer-tier" }}`},
		{`{{ .q }}\n{{ if .x }}\n  {{ printf \"%s\" .customer.first-name.initial }}{{ end }}`, `.customer.first-name.initial (content line 3, column 18) reads the key "first-name"`},
		{`{{ .q }}\n{{ if .x }}\n  {{ printf \"%s\" .customer.first-name.initial }}{{ end }}`, `write {{ index .customer "first-name" "initial" }}`},
		{`{{ range .items }}{{ $.order-id }}: {{ .name }}{{ end }}`, `write {{ index $ "order-id" }}`},
		{`{{ with .a }}{{ $x := . }}{{ $x.line-no }}{{ end }}`, `write {{ index $x "line-no" }}`},
		{`see www.example-site.com/{{ \"a.b-c\" }} {{/* .x-y */}} {{ .tier-2 }}`, `.tier-2 (content line 1, column 74) reads the key "tier-2"`},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `"Answer in JSON: `+c.content+`"`, 1)
		line := loadProblem(t, m, nil, "messages[0].content")
		if !strings.Contains(line, c.want) {
			t.Errorf("%s:\n got %s\nwant %s in it", c.content, line, c.want)
		}
	}
}

// A '-' the lexer refuses that is not in a key's name keeps the parser's
// message: there is no key to name.
func TestLoadKeepsTheParsersMessageForAnotherHyphen(t *testing.T) {
	m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `"Answer in JSON: {{ .q-}}"`, 1)
	line := loadProblem(t, m, nil, "messages[0].content")
	if !strings.HasSuffix(line, `template: p messages[0].content:1: bad character U+002D '-'`) {
		t.Errorf("got %s", line)
	}
}
