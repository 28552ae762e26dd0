package contract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// An enum value of a type the output schema forbids at its path loaded, and
// then no answer could pass: `/currency: [840, 978]` is read as numbers,
// /currency is a string, and every answer was refused with "enum". It is
// refused at load, saying how to write the value; so is an equal rule whose
// two paths the schema types apart.
func TestRuleValuesOfATypeTheSchemaForbids(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"currency":{"type":"string"},"code":{"type":"integer"},"flag":{"type":["boolean","null"]},
		"items":{"type":"array","items":{"type":"object","properties":{"unit":{"type":"string"}}}},"total":{"type":"number"},"label":{"type":"string"},"any":{}}}`)
	for _, tc := range []struct {
		rules        contract.Rules
		field, wants string
	}{
		{contract.Rules{Enums: map[string][]any{"/currency": {840, 978}}}, "enums[/currency]", `the value 840 (number) can never be at "/currency", which is a string in the output schema`},
		{contract.Rules{Enums: map[string][]any{"/currency": {840, 978}}}, "enums[/currency]", `quote it, as YAML reads a bare number as a number: "840"`},
		{contract.Rules{Enums: map[string][]any{"/currency": {"EUR", true}}}, "enums[/currency]", `the value true (boolean)`},
		{contract.Rules{Enums: map[string][]any{"/code": {"840"}}}, "enums[/code]", `write it without quotes: 840`},
		{contract.Rules{Enums: map[string][]any{"/flag": {"yes"}}}, "enums[/flag]", `which is a boolean or null in the output schema`},
		{contract.Rules{Enums: map[string][]any{"/items/*/unit": {1}}}, "enums[/items/*/unit]", `the value 1 (number) can never be at "/items/*/unit"`},
		{contract.Rules{Equal: []contract.EqualRule{{Left: "/total", Right: "/label"}}}, "equal[0]", `"/total" is a number and "/label" is a string in the output schema: no value could be both`},
	} {
		_, err := contract.NewValidator(schema, "out.json", tc.rules)
		var re *contract.RuleError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.field+": ") || !strings.Contains(err.Error(), tc.wants) {
			t.Errorf("%+v: %v\nwant a RuleError of %s saying %q", tc.rules, err, tc.field, tc.wants)
		}
	}
	// Values the schema allows, or where it does not say, load.
	for _, rules := range []contract.Rules{
		{Enums: map[string][]any{"/currency": {"840", "EUR"}, "/code": {840, 978}, "/flag": {true, nil}, "/any": {1, "x"}, "/total": {1.5}}},
		{Equal: []contract.EqualRule{{Left: "/total", Right: "/code"}, {Left: "/any", Right: "/label"}}},
	} {
		if _, err := contract.NewValidator(schema, "out.json", rules); err != nil {
			t.Errorf("%+v: %v", rules, err)
		}
	}
}
