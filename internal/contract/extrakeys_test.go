package contract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// With no_extra_keys on (the default), a schema that requires a key it does
// not declare in "properties", or a tagged union whose branches each require
// a key declared only in that branch, loaded, and then every output was
// refused: by the schema without the key, by no_extra_keys with it. A
// required key declared nowhere is refused at load, naming it and the fix;
// the keys declared in anyOf, oneOf and if/then/else branches are declared.
// Found by review.
func TestNoExtraKeysAgreesWithTheSchema(t *testing.T) {
	t.Run("required but not declared", func(t *testing.T) {
		schema := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer","confidence"]}`
		_, err := contract.NewValidator([]byte(schema), "", contract.Rules{})
		var re *contract.RuleError
		if err == nil || !errors.As(err, &re) || re.Field != "no_extra_keys" ||
			!strings.Contains(err.Error(), `requires the key "confidence" but does not declare it`) || !strings.Contains(err.Error(), "or set no_extra_keys: false") {
			t.Fatalf("NewValidator = %v, want a no_extra_keys RuleError naming confidence and the fix", err)
		}
		// Without no_extra_keys the schema alone judges, as before.
		if _, err := contract.NewValidator([]byte(schema), "", contract.Rules{NoExtraKeys: ptr(false)}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("tagged union", func(t *testing.T) {
		for _, kw := range []string{"oneOf", "anyOf"} {
			schema := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"` + kw + `":[{"properties":{"confidence":{"type":"number"}},"required":["confidence"]},{"properties":{"reason":{"type":"string"}},"required":["reason"]}]}`
			val := mustValidator(t, []byte(schema), contract.Rules{})
			checkCase(t, val, `{"answer":"a","confidence":0.9}`, nil, "")
			checkCase(t, val, `{"answer":"a","reason":"r"}`, nil, "")
			checkCase(t, val, `{"answer":"a","reason":"r","x":1}`, []v{{"no_extra_keys", "/x"}}, `key "x" is not declared`)
		}
	})

	t.Run("if then else", func(t *testing.T) {
		schema := `{"type":"object","properties":{"kind":{"enum":["a","b"]}},"required":["kind"],"if":{"properties":{"kind":{"const":"a"}}},"then":{"properties":{"x":{"type":"number"}},"required":["x"]},"else":{"properties":{"y":{"type":"string"}},"required":["y"]}}`
		val := mustValidator(t, []byte(schema), contract.Rules{})
		checkCase(t, val, `{"kind":"a","x":1}`, nil, "")
		checkCase(t, val, `{"kind":"b","y":"r"}`, nil, "")
	})

	t.Run("every branch requires an undeclared key", func(t *testing.T) {
		schema := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"oneOf":[{"required":["confidence"]},{"required":["reason"]}]}`
		_, err := contract.NewValidator([]byte(schema), "", contract.Rules{})
		if err == nil || !strings.Contains(err.Error(), `no_extra_keys: every branch of the output schema's oneOf requires a key declared in no "properties" (confidence, reason)`) {
			t.Fatalf("NewValidator = %v", err)
		}
		// One branch an output can take without an undeclared key: it loads.
		ok := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"anyOf":[{"required":["confidence"]},{"required":["answer"]}]}`
		checkCase(t, mustValidator(t, []byte(ok), contract.Rules{}), `{"answer":"a"}`, nil, "")
	})
}
