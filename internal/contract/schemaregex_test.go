package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// "format": "regex" is an annotation in every schema (schemaregex.go): a
// string under it is never compiled, nor parsed, so what an answer or an
// input costs to check does not depend on the expressions it holds. Shown
// deterministically by what it accepts: "(" and "(?=x)" are not Go
// expressions, and an answer of 500 copies of "^\pL{900}$" (7 MB and 14 to
// 26 ms each, compiled) is accepted as it stands. Checked for a caller's
// schema (response_format, tool parameters), a prompt's output_schema
// (NewValidator) and the Schema a prompt checks its input_schema with
// (CompileSchema, CompileSelfContainedSchema: Schema.Check), under items
// and under propertyNames.
func TestRegexFormatIsAnAnnotation(t *testing.T) {
	const items = `{"type":"object","properties":{"p":{"type":"array","items":{"type":"string","format":"regex"}}}}`
	const names = `{"type":"object","properties":{"p":{"type":"object","propertyNames":{"format":"regex"}}}}`
	many := `{"p":[` + strings.TrimSuffix(strings.Repeat(`"^\\pL{900}$",`, 500), ",") + `]}`
	answers := []string{`{"p":["("]}`, `{"p":["(?=x)","\\1","[z-a]"]}`, many}
	keyed := []string{`{"p":{"(":1}}`, `{"p":{"^\\pL{900}$":1,"(?i)[\\x{80}-\\x{10FFFF}]":2}}`}

	request := func(schema string) func(string) []contract.Violation {
		v, err := contract.NewRequestValidator([]byte(schema), "response_format.json_schema", contract.Rules{})
		if err != nil {
			t.Fatal(err)
		}
		return func(out string) []contract.Violation { _, vs := v.Validate(out); return vs }
	}
	prompt := func(schema string) func(string) []contract.Violation {
		v, err := contract.NewValidator([]byte(schema), "out.json", contract.Rules{})
		if err != nil {
			t.Fatal(err)
		}
		return func(out string) []contract.Violation { _, vs := v.Validate(out); return vs }
	}
	check := func(compile func([]byte, string) (*contract.Schema, error)) func(string) func(string) []contract.Violation {
		return func(schema string) func(string) []contract.Violation {
			s, err := compile([]byte(schema), "in.json")
			if err != nil {
				t.Fatal(err)
			}
			return func(in string) []contract.Violation {
				doc, err := contract.ParseJSON([]byte(in))
				if err != nil {
					t.Fatal(err)
				}
				return s.Check(doc)
			}
		}
	}
	for name, mk := range map[string]func(string) func(string) []contract.Violation{
		"request": request, "prompt output": prompt,
		"prompt input": check(contract.CompileSchema), "self-contained": check(contract.CompileSelfContainedSchema),
	} {
		for schema, docs := range map[string][]string{items: answers, names: keyed} {
			validate := mk(schema)
			for _, doc := range docs {
				if vs := validate(doc); len(vs) != 0 {
					t.Errorf("%s, %s, %.60s: %v, want none: format regex is not checked", name, schema, doc, vs)
				}
			}
		}
	}
}
