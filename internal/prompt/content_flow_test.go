package prompt_test

import (
	"strings"
	"testing"
)

// A content that starts with "{{" and is not quoted is YAML, not text: a
// flow mapping ({{ .q }}: "line 7: a mapping, where text is expected") or,
// with text after the braces, not valid YAML at all ("yaml: line 5: did not
// find expected key", two lines off). Neither said that the template's
// braces are the cause. Both say so, on which line, and how to write it.
func TestContentStartingWithBracesSaysToQuoteIt(t *testing.T) {
	const fix = `quote it ('{{ .q }} ...') or write it as a block ("content: |" and the text on the lines below, indented)`
	for _, c := range []struct{ content, want string }{
		{`{{ .q }}`, `: messages[0].content: line 7: a mapping, where text is expected: YAML reads a value that starts with "{" or "[" as a mapping or a list, not text; ` + fix},
		{`[{{ .q }}]`, `: messages[0].content: line 7: a list, where text is expected: YAML reads a value that starts with "{" or "[" as a mapping or a list, not text; ` + fix},
		{`{{ .q }} in JSON`, `: not valid YAML: yaml: line 5: did not find expected key; line 7 starts a value with "{{" unquoted, which YAML reads as a mapping, not text: ` + fix},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, c.content, 1)
		_, file, err := loadOne(t, m, nil)
		if err == nil || err.Error() != file+c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.content, err, file+c.want)
		}
	}
	// Neither a block mapping, nor a mapping of rules, nor a template in a
	// block scalar is such a value.
	for _, m := range []string{
		strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, "\n      a: b", 1),
		strings.Replace(manifestWith("rules: {enums: {/answer: [a]}\n"), `"Answer in JSON: {{ .q }}"`, "|\n      Answer in JSON.\n      Subject: {{ .q }}\n      - {{ .q }}", 1),
	} {
		if _, _, err := loadOne(t, m, nil); err == nil || strings.Contains(err.Error(), "quote it") {
			t.Errorf("%s: %v", m, err)
		}
	}
}
