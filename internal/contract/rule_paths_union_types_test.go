package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A rule path through a tagged union is checked against the variants that
// declare its key: the types of several together, the path's rest within
// them; a key declared nowhere is refused naming the variants' keys too, and
// one declared only in a branch beside "additionalProperties": false (which
// refuses it in every output) is refused saying so.
func TestRulePathsThroughATaggedUnionAreChecked(t *testing.T) {
	zero := 0.0
	union := func(root, card, bank string) string {
		return `{"type":"object","properties":{"kind":{"enum":["card","bank"]}},"required":["kind"]` + root + `,` +
			`"oneOf":[{"properties":{"kind":{"const":"card"}` + card + `}},{"properties":{"kind":{"const":"bank"}` + bank + `}}]}`
	}
	for _, c := range []struct {
		name, schema string
		rules        contract.Rules
		want         string // "" loads
	}{
		{"a range on a key typed number in one variant and string in the other",
			union("", `,"fee":{"type":"number"}`, `,"fee":{"type":"string"}`),
			contract.Rules{Ranges: map[string]contract.Range{"/fee": {Min: &zero}}}, ""},
		{"an enum value neither variant's type allows",
			union("", `,"fee":{"type":"number"}`, `,"fee":{"type":"string"}`),
			contract.Rules{Enums: map[string][]any{"/fee": {true}}}, `the value true (boolean) can never be at "/fee", which is a number or string in the output schema`},
		{"a range on a key the only variant declaring it types boolean",
			union("", `,"fee":{"type":"boolean"}`, ``),
			contract.Rules{Ranges: map[string]contract.Range{"/fee": {Min: &zero}}}, `path "/fee" is a boolean in the output schema; this rule needs`},
		{"a path into a variant's number",
			union("", `,"fee":{"type":"number"}`, `,"iban":{"type":"string"}`),
			contract.Rules{Ranges: map[string]contract.Range{"/fee/amount": {Min: &zero}}}, `/fee is a number in the output schema, so it has no property "amount"`},
		{"a key declared nowhere",
			union("", `,"fee":{"type":"number"}`, `,"iban":{"type":"string"}`),
			contract.Rules{Ranges: map[string]contract.Range{"/tax": {Min: &zero}}}, `property "tax" is not declared in the output schema at $ (declared: fee, iban, kind)`},
		{"a key only a branch declares beside additionalProperties false",
			union(`,"additionalProperties":false`, `,"fee":{"type":"number"}`, ``),
			contract.Rules{Ranges: map[string]contract.Range{"/fee": {Min: &zero}}, NoExtraKeys: new(bool)},
			`property "fee" is declared only in a branch (anyOf, oneOf, then, else, dependentSchemas) at $, and "additionalProperties": false beside that branch refuses it in every output`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := contract.NewValidator([]byte(c.schema), "", c.rules)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("does not load: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("loads with %v, want it refused: %s", err, c.want)
			}
		})
	}
}
