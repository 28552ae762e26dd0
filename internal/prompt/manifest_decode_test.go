package prompt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// problemsOf returns the lines of a LoadError, without the file prefix.
func problemsOf(t *testing.T, err error, file string) []string {
	t.Helper()
	var le *prompt.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("want *LoadError, got %v", err)
	}
	var out []string
	for _, p := range le.Problems {
		out = append(out, strings.TrimPrefix(p.String(), file+": "))
	}
	return out
}

// A key the decoder refuses is reported once, and the checks that follow do
// not add false problems about what it left empty: yaml drops a whole
// mapping with a repeated key ("name: required" for a manifest that sets
// name), and leaves a value of the wrong type zero ("max_tokens: required and
// positive" for `max_tokens: lots`).
func TestLoadDir_DecodeErrorsReportedOnce(t *testing.T) {
	tests := []struct {
		name, manifest string
		want           []string
	}{
		{"repeated top-level key", strings.Replace(manifestWith(""), "version: \"1\"\n", "version: \"1\"\nversion: \"2\"\n", 1),
			[]string{`version: line 3: "version" appears again (first at line 2); a key may appear once in a mapping: delete one`}},
		{"repeated key in a message", strings.Replace(manifestWith(""), "  - role: user\n", "  - role: user\n    role: system\n", 1),
			[]string{`messages[0].role: line 7: "role" appears again (first at line 6); a key may appear once in a mapping: delete one`}},
		{"repeated key in rules", manifestWith("rules:\n  enums: {/answer: [a]}\n  enums: {/answer: [b]}\n"),
			[]string{`rules.enums: line 10: "enums" appears again (first at line 9); a key may appear once in a mapping: delete one`}},
		{"max_tokens not a number", strings.Replace(manifestWith(""), "max_tokens: 100", "max_tokens: lots", 1),
			[]string{`max_tokens: line 3: the text "lots", where a whole number is expected`}},
		{"messages not a list", strings.Replace(manifestWith(""), "messages:\n  - role: user\n    content: \"Answer in JSON: {{ .q }}\"\n", "messages: 3\n", 1),
			[]string{`messages: line 5: the number 3, where a list is expected`}},
		{"version a list, with an unknown field", manifestWith("versoin: 2\n") + "temperature: [1]\n",
			[]string{"versoin: unknown field (line 8); known fields: description, input_schema, max_tokens, messages, model, name, output_schema, response_format, route, rules, seed, strict, temperature, version",
				"temperature: line 9: a list, where a number is expected"}},
		{"a second document", manifestWith("---\nname: q\n"),
			[]string{`line 8: a second YAML document starts here ("---"), and a manifest is one document (the router would ignore the second): remove the "---" and merge what follows into the manifest above it, or put another prompt in a directory of its own`}},
		{"empty", "", []string{"the file is empty; write the manifest: name, version, max_tokens, output_schema and messages"}},
		{"not a mapping", "- name: p\n", []string{"line 1: the manifest must be a mapping of fields (name: ..., version: ..., messages: ...), not a list"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, file, err := loadOne(t, tc.manifest, nil)
			got := problemsOf(t, err, file)
			if len(got) != len(tc.want) {
				t.Fatalf("want %d problems, got %d:\n%s", len(tc.want), len(got), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %d:\n%s\nwant\n%s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// A document end marker alone ("...") is not a second document, a leading
// "---" starts the only one, a trailing "---" (as generators write) starts an
// empty one with nothing to ignore, and a byte-order mark is skipped.
func TestLoadDir_SingleDocumentMarkers(t *testing.T) {
	for _, m := range []string{"---\n" + manifestWith(""), manifestWith("...\n"), "\xef\xbb\xbf" + manifestWith(""),
		manifestWith("---\n"), manifestWith("---\n# nothing more\n---\n")} {
		if _, _, err := loadOne(t, m, nil); err != nil {
			t.Errorf("%q: %v", m, err)
		}
	}
}
