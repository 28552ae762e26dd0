package contract_test

import (
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A tagged union declares each variant's keys in its branch: no_extra_keys
// takes them as declared (extrakeys.go, docs/prompts.md "no_extra_keys"), so
// {"kind":"card","fee":-1} passes it. A rule on such a key — the fee may not
// be negative — was refused at load, saying the key "is not declared in the
// output schema": the rule paths are checked by Schema.declared, which looks
// at "properties" beside "$ref" and in "allOf" only, not in the anyOf, oneOf
// and if/then/else branches no_extra_keys counts. The same holds one level
// down (/payment/fee, where payment is the union). A valid contract cannot
// be written without declaring the key a second time outside the union.
func TestRulePathsReachTheKeysOfATaggedUnion(t *testing.T) {
	min := 0.0
	for _, c := range []struct{ name, schema, path, bad, badAt string }{
		{"top level",
			`{"type":"object","properties":{"kind":{"enum":["card","bank"]}},"required":["kind"],` +
				`"oneOf":[{"properties":{"kind":{"const":"card"},"fee":{"type":"number"}},"required":["fee"]},` +
				`{"properties":{"kind":{"const":"bank"},"iban":{"type":"string"}},"required":["iban"]}]}`,
			"/fee", `{"kind":"card","fee":-1}`, "/fee"},
		{"nested",
			`{"type":"object","properties":{"payment":{"type":"object","properties":{"kind":{"enum":["card","bank"]}},` +
				`"anyOf":[{"properties":{"fee":{"type":"number"}},"required":["fee"]},{"properties":{"iban":{"type":"string"}},"required":["iban"]}]}}}`,
			"/payment/fee", `{"payment":{"kind":"card","fee":-1}}`, "/payment/fee"},
		{"if then else",
			`{"type":"object","properties":{"kind":{"enum":["card","bank"]}},"required":["kind"],` +
				`"if":{"properties":{"kind":{"const":"card"}}},"then":{"properties":{"fee":{"type":"number"}},"required":["fee"]},` +
				`"else":{"properties":{"iban":{"type":"string"}},"required":["iban"]}}`,
			"/fee", `{"kind":"card","fee":-1}`, "/fee"},
	} {
		t.Run(c.name, func(t *testing.T) {
			val, err := contract.NewValidator([]byte(c.schema), "", contract.Rules{Ranges: map[string]contract.Range{c.path: {Min: &min}}})
			if err != nil {
				t.Fatalf("a range on %s, a key the union declares, does not load: %v", c.path, err)
			}
			checkCase(t, val, c.bad, []v{{"range", c.badAt}}, "is below the minimum 0")
		})
	}
}
