package prompt_test

import (
	"strings"
	"testing"
)

// A file of shared definitions that is a plain map of named schemas
// ({"Item": {...}, "Type": {...}}, referred to as "common.json#/Item") was
// refused at load, its names taken for misspelt keywords ("Item" for
// "items"), when the compiler followed the reference itself (draft 7: not
// copied in). It loads, copied in or not, and a misspelt keyword inside a
// definition it uses is still a load problem naming the file.
func TestLoadDir_SchemaReferringToNamedDefinitionsInAFile(t *testing.T) {
	common := `{"Item":{"type":"object","properties":{"sku":{"type":"string"}},"required":["sku"]},"Type":{"enum":["a","b"]}}`
	for _, draft := range []string{"", `"$schema":"http://json-schema.org/draft-07/schema#",`} {
		in := `{` + draft + `"type":"object","properties":{"q":{"type":"string"},"item":{"$ref":"common.json#/Item"},"kind":{"$ref":"common.json#/Type"}}}`
		if _, _, err := loadOne(t, manifestWith("input_schema: in.json\n"), map[string]string{"out.json": outSchema, "in.json": in, "common.json": common}); err != nil {
			t.Errorf("draft %q: %v", draft, err)
		}
		bad := strings.Replace(common, `"required"`, `"requried"`, 1)
		line := loadProblem(t, manifestWith("input_schema: in.json\n"), map[string]string{"out.json": outSchema, "in.json": in, "common.json": bad}, "input_schema")
		if !strings.Contains(line, `"requried" at #/`) || !strings.Contains(line, "common.json") || !strings.Contains(line, `did you mean "required"?`) {
			t.Errorf("draft %q, misspelt keyword in a definition: %s", draft, line)
		}
	}
}
