package prompt_test

import (
	"strings"
	"testing"
)

// A schema file that is not JSON is reported with the line and column of the
// fault (the compiler gives neither), and a UTF-8 byte-order mark, which
// editors add and JSON forbids, is skipped as in prompt.yaml rather than
// reported as "invalid character 'ï'".
func TestLoadDir_SchemaFileSyntax(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	tests := []struct {
		name  string
		files map[string]string
		want  string // "" loads
	}{
		{"trailing comma", map[string]string{"out.json": "{\n  \"type\": \"object\",\n  \"properties\": {\"answer\": {\"type\": \"string\"}},\n}\n"},
			`output_schema: schema %s/out.json is not valid JSON: line 4, column 1: invalid character '}' looking for beginning of object key string (a trailing comma: JSON allows none before } or ])`},
		{"trailing comma in a list", map[string]string{"out.json": `{"required": ["a",]}`},
			`line 1, column 19: invalid character ']' looking for beginning of value (a trailing comma`},
		{"trailing comma at the end", map[string]string{"out.json": "[1,\n2,]"},
			`line 2, column 3: invalid character ']' looking for beginning of value (a trailing comma: JSON allows none before } or ])`},
		{"column counts characters", map[string]string{"out.json": "{\"description\": \"é\" \"type\": 1}"},
			`line 1, column 21: invalid character '"' after object key:value pair`},
		{"truncated", map[string]string{"out.json": "{\"type\":\n"}, `line 2, column 1: unexpected end of JSON input`},
		{"empty", map[string]string{"out.json": " \n"}, `the file is empty`},
		{"trailing data", map[string]string{"out.json": "{}\n{}"}, `line 2, column 1: invalid character '{' after top-level value`},
		{"byte-order mark", map[string]string{"out.json": bom + outSchema}, ""},
		{"byte-order mark in a referenced file", map[string]string{
			"out.json": `{"type":"object","properties":{"answer":{"$ref":"common.json#/$defs/a"}}}`, "common.json": bom + `{"$defs":{"a":{"type":"string"}}}`}, ""},
		{"syntax error in a referenced file", map[string]string{
			"out.json": `{"type":"object","properties":{"answer":{"$ref":"common.json#/$defs/a"}}}`, "common.json": "{\"$defs\": {\"a\": {\"type\": \"string\",}}}"},
			`output_schema: %s/common.json: not valid JSON: line 1, column 35: invalid character '}' looking for beginning of object key string (a trailing comma: JSON allows none before } or ]) (referred to by "$ref": "common.json#/$defs/a" in out.json)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, file, err := loadOne(t, manifestWith(""), tc.files)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = strings.ReplaceAll(want, "%s", strings.TrimSuffix(file, "/prompt.yaml"))
			}
			got := problemsOf(t, err, file)
			if len(got) != 1 || !strings.Contains(got[0], want) {
				t.Fatalf("want one problem containing\n%s\ngot\n%s", want, strings.Join(got, "\n"))
			}
		})
	}
}
