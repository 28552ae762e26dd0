package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A product or sum whose float64 arithmetic overflows to ±Inf used to pass:
// the rounding slack, 1e-14 of the larger value, was infinite then. It is now
// a violation saying the rule cannot compare it.
func TestRules_OverflowingProductAndSumFail(t *testing.T) {
	schema := `{"type":"object","properties":{"total":{"type":"number"},"items":{"type":"array","items":{"type":"object","properties":{"q":{"type":"number"},"p":{"type":"number"},"amount":{"type":"number"}}}}}}`
	val := mustValidator(t, []byte(schema), contract.Rules{
		Products: []contract.ProductRule{{Items: "/items", Result: "amount", Factors: []string{"q", "p"}}},
		Sums:     []contract.SumRule{{Items: "/items", Field: "amount", Total: "/total"}},
	})
	// amount 1 = 1e200 * 1e200?
	checkCase(t, val, `{"items":[{"q":1e200,"p":1e200,"amount":1}],"total":1}`, []v{{"product", "/items/0/amount"}},
		"amount is 1 but q * p = 1e+200 * 1e+200 overflows a 64-bit float, so this rule cannot compare it")
	// total 5 = 1e308 + 1e308?
	checkCase(t, val, `{"items":[{"q":1,"p":1e308,"amount":1e308},{"q":1,"p":1e308,"amount":1e308}],"total":5}`, []v{{"sum", "/total"}},
		"is 5 but the sum of /items/*/amount over 2 items overflows a 64-bit float, so this rule cannot compare it")
	// +Inf + -Inf is NaN: no pass either.
	checkCase(t, val, `{"items":[{"q":1,"p":1e308,"amount":1e308},{"q":1,"p":1e308,"amount":1e308},{"q":-1,"p":1e308,"amount":-1e308},{"q":-1,"p":1e308,"amount":-1e308}],"total":0}`, []v{{"sum", "/total"}},
		"overflows a 64-bit float")
	// Large values that do not overflow still compare.
	checkCase(t, val, `{"items":[{"q":1e150,"p":1e150,"amount":1e300}],"total":1e300}`, nil, "")

	sumTimes := mustValidator(t, []byte(schema), contract.Rules{Sums: []contract.SumRule{{Items: "/items", Field: "q", Multiply: "p", Total: "/total"}}})
	_, vs := sumTimes.Validate(`{"items":[{"q":1e200,"p":1e200}],"total":1}`)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "the sum of /items/*/q * p over 1 items overflows a 64-bit float") {
		t.Fatalf("violations %v", vs)
	}
}
