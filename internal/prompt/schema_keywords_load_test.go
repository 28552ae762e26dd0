package prompt_test

import (
	"strings"
	"testing"
)

// A misspelt keyword in a prompt's output or input schema is a load problem
// naming the file, where in the schema it is, and the keyword meant: it was
// ignored, and checked nothing.
func TestLoadDir_MisspeltKeywordInAPromptSchema(t *testing.T) {
	line := loadProblem(t, manifestWith(""), map[string]string{
		"out.json": `{"type":"object","properties":{"answer":{"type":"string","maxLenght":3}},"required":["answer"]}`}, "output_schema")
	if !strings.Contains(line, "out.json: \"maxLenght\" at #/properties/answer is not a JSON Schema keyword") || !strings.Contains(line, `did you mean "maxLength"?`) {
		t.Errorf("output schema: %s", line)
	}
	line = loadProblem(t, manifestWith("input_schema: in.json\n"), map[string]string{"out.json": outSchema,
		"in.json": `{"type":"object","properties":{"q":{"type":"string"}},"requried":["q"]}`}, "input_schema")
	if !strings.Contains(line, "in.json: \"requried\" at the schema's root") || !strings.Contains(line, `did you mean "required"?`) {
		t.Errorf("input schema: %s", line)
	}
	// In a file the schema refers to, whether copied in or followed by the
	// compiler (draft 7: not copied in), the file is named.
	for _, draft := range []string{"", `"$schema":"http://json-schema.org/draft-07/schema#",`} {
		line = loadProblem(t, manifestWith("input_schema: in.json\n"), map[string]string{"out.json": outSchema,
			"in.json":     `{` + draft + `"type":"object","properties":{"q":{"$ref":"common.json#/definitions/q"}}}`,
			"common.json": `{"definitions":{"q":{"type":"string","maxLenght":3}}}`}, "input_schema")
		if !strings.Contains(line, `"maxLenght" at #/`) || !strings.Contains(line, "common.json") || !strings.Contains(line, `did you mean "maxLength"?`) {
			t.Errorf("referenced file (%s): %s", draft, line)
		}
	}
}

// A pattern RE2 cannot parse in a prompt's schema (a lookbehind, valid in
// the ECMA-262 patterns JSON Schema allows) said only "is not valid 'regex'";
// the load problem names the file, the pattern's place, and why.
func TestLoadDir_PatternRE2CannotParseInAPromptSchema(t *testing.T) {
	for field, files := range map[string]map[string]string{
		"output_schema": {"out.json": `{"type":"object","properties":{"answer":{"type":"string","pattern":"(?<=EUR )\\d+"}},"required":["answer"]}`},
		"input_schema": {"out.json": outSchema,
			"in.json": `{"type":"object","properties":{"q":{"type":"string","pattern":"(?<=EUR )\\d+"}}}`},
	} {
		m := manifestWith("")
		if field == "input_schema" {
			m = manifestWith("input_schema: in.json\n")
		}
		line := loadProblem(t, m, files, field)
		if !strings.Contains(line, ".json: the pattern at /properties/") || !strings.Contains(line, "RE2") || !strings.Contains(line, "lookbehind") {
			t.Errorf("%s: %s", field, line)
		}
	}
}
