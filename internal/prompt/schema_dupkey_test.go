package prompt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// A schema file that names a key twice loaded silently: the router judged by
// the last value while providers, sent the text as written, may be
// constrained by the first. It is refused like duplicate keys everywhere
// else, naming the file, the line and column and the JSON pointer. Found by
// review.
func TestLoadDir_SchemaFileWithDuplicateKey(t *testing.T) {
	schema := `{"type":"object","properties":{"answer":{"type":"string","enum":["yes","no"],"enum":["maybe"]}},"required":["answer"]}`
	set, file, err := loadOne(t, manifestWith(""), map[string]string{"out.json": schema})
	if err == nil {
		p, _ := set.Get("p", "")
		t.Fatalf("schema with \"enum\" twice loads; providers receive %s", p.ProviderResponseFormat().Schema)
	}
	var le *prompt.LoadError
	if !errors.As(err, &le) || len(le.Problems) != 1 {
		t.Fatalf("want one load problem, got %v", err)
	}
	for _, want := range []string{file + ": output_schema: ", "out.json: line 1, column 78: ",
		`the object at JSON pointer /properties/answer has the key "enum" twice`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
}

// The same for every schema file the router reads: the input schema, a file
// the output schema refers to (copied in), and one the compiler follows
// itself (a json_object prompt's reference that cannot be copied in).
func TestLoadDir_DuplicateKeyInEverySchemaFile(t *testing.T) {
	for name, tc := range map[string]struct {
		extra string
		files map[string]string
		want  []string
	}{
		"input schema": {"input_schema: in.json\n", map[string]string{"out.json": outSchema,
			"in.json": "{\n  \"type\": \"object\",\n  \"type\": \"array\"\n}"},
			[]string{"input_schema: ", "in.json: line 3, column 3: the top-level object has the key \"type\" twice"}},
		"referenced file": {"", map[string]string{
			"out.json":    `{"type":"object","properties":{"a":{"$ref":"common.json#/$defs/a"}}}`,
			"common.json": `{"$defs":{"a":{"type":"string","maxLength":3,"maxLength":300}}}`},
			[]string{"output_schema: ", "common.json: line 1, column 46: the object at JSON pointer /$defs/a has the key \"maxLength\" twice",
				`referred to by "$ref": "common.json#/$defs/a" in out.json`}},
		"file the compiler follows": {"response_format: json_object\n", map[string]string{
			"out.json":    `{"type":"object","properties":{"a":{"$ref":"common.json#/definitions/a"},"b":{"$ref":"more.json"}}}`,
			"common.json": `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"type":"string"}}}`,
			"more.json":   `{"type":"string","type":"integer"}`},
			[]string{"output_schema: ", "more.json: line 1, column 18: the top-level object has the key \"type\" twice",
				`(a file the compiler reads for the schema out.json)`}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := loadOne(t, manifestWith(tc.extra), tc.files)
			var le *prompt.LoadError
			if !errors.As(err, &le) || len(le.Problems) != 1 {
				t.Fatalf("want one load problem, got %v", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error lacks %q: %v", want, err)
				}
			}
		})
	}
}
