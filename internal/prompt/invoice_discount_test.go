package prompt_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// An invoice with a discount has one honest answer: the discount as a line of
// its own, negative, and the total net of it. The shipped contract must accept
// it (version 2 refused a negative unit_price, so only an answer that dropped the
// line and broke the sum, or one that misstated the total, could be written),
// and must still refuse a negative quantity or total.
func TestInvoice_DiscountLine(t *testing.T) {
	p, err := loadExamples(t).Get("invoice", "")
	if err != nil {
		t.Fatal(err)
	}
	const head = `{"invoice_number":"BW-1","currency":"USD","issue_date":"2025-06-12","due_date":"2025-07-12","line_items":[` +
		`{"description":"Redesign","quantity":1,"unit_price":2400.00,"amount":2400.00},`
	for _, tc := range []struct {
		name, out  string
		rule, path string // "" when the answer passes
	}{
		{"discount line", head + `{"description":"Discount 10%","quantity":1,"unit_price":-240.00,"amount":-240.00}],"total":2160.00}`, "", ""},
		{"credit line", head + `{"description":"Credit note CN-7","quantity":1,"unit_price":-2400.00,"amount":-2400.00}],"total":0}`, "", ""},
		{"discount left out", head[:len(head)-1] + `],"total":2160.00}`, "sum", "/total"},
		{"negative quantity", head + `{"description":"Discount 10%","quantity":-1,"unit_price":240.00,"amount":-240.00}],"total":2160.00}`, "range", "/line_items/1/quantity"},
		{"negative total", head + `{"description":"Credit","quantity":1,"unit_price":-2500.00,"amount":-2500.00}],"total":-100.00}`, "range", "/total"},
	} {
		_, vs := p.Validator().Validate(tc.out)
		if tc.rule == "" {
			if len(vs) > 0 {
				t.Errorf("%s: refused: %v", tc.name, vs)
			}
			continue
		}
		if !violatesAt(vs, tc.rule, tc.path) {
			t.Errorf("%s: violations %v, want %s at %s", tc.name, vs, tc.rule, tc.path)
		}
	}
	// The model is told how to write one: a contract it is not told of fails
	// every attempt against the provider's breaker.
	if sys := p.Messages[0].Content; !strings.Contains(sys, `negative "unit_price"`) || !strings.Contains(sys, "discount") {
		t.Errorf("the system message does not say how to write a discount:\n%s", sys)
	}
}

func violatesAt(vs []contract.Violation, rule, path string) bool {
	for _, v := range vs {
		if v.Rule == rule && v.Path == path {
			return true
		}
	}
	return false
}
