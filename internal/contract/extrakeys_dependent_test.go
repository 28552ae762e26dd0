package contract_test

import (
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// With no_extra_keys on, the keys a top-level dependentSchemas (or draft 7's
// schema "dependencies") declares are declared: an output that has the key a
// dependent schema depends on, and the keys that schema requires with it,
// passes, where no_extra_keys refused the keys the schema demands.
func TestNoExtraKeysCountsDependentSchemas(t *testing.T) {
	for name, schema := range map[string]string{
		"dependentSchemas": `{"type":"object","required":["kind"],"properties":{"kind":{"type":"string"},"refund":{"type":"boolean"}},
			"dependentSchemas":{"refund":{"properties":{"refund_amount":{"type":"number"}},"required":["refund_amount"]}}}`,
		"dependencies": `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["kind"],"properties":{"kind":{"type":"string"},"refund":{"type":"boolean"}},
			"dependencies":{"refund":{"properties":{"refund_amount":{"type":"number"}},"required":["refund_amount"]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			val := mustValidator(t, []byte(schema), contract.Rules{})
			checkCase(t, val, `{"kind":"billing","refund":true,"refund_amount":12.5}`, nil, "")
			checkCase(t, val, `{"kind":"billing"}`, nil, "")
			checkCase(t, val, `{"kind":"billing","refund_amount":12.5,"x":1}`, []v{{"no_extra_keys", "/x"}}, `key "x" is not declared`)
		})
	}
}
