package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A product or sum rule's tolerance is absolute and exact, however large the
// amounts (tolerance.go): at 10^13 a float64 step is 0.002, and the slack
// that float64 rounding once needed let amounts 0.09 off through.
func TestSumAndProductToleranceIsAbsolute(t *testing.T) {
	inv := loadExample(t, "invoice")
	out := `{"invoice_number":"1","currency":"JPY","issue_date":"2024-01-01","due_date":"2024-01-02",
	  "line_items":[{"description":"plant","quantity":1,"unit_price":10000000000000.00,"amount":10000000000000.09}],
	  "total":10000000000000.18}`
	doc, vs := inv.Validate(out)
	if doc != nil {
		t.Fatalf("accepted: amount is 0.09 off quantity*unit_price and total 0.09 off the sum, with tolerance 0.01 (violations %v)", vs)
	}
	var rules []string
	for _, v := range vs {
		rules = append(rules, v.Rule)
		if v.Rule == "sum" && !strings.Contains(v.Message, "off by 0.09,") {
			t.Errorf("sum: %q, want it off by 0.09 exactly", v.Message)
		}
	}
	if strings.Join(rules, ",") != "product,sum" {
		t.Errorf("violations %v, want one product and one sum", vs)
	}
}

// At the tolerance exactly is within it, one cent past is not, whatever the
// magnitude; and a tolerance of 0 means equal as decimals, as written
// (0.1 + 0.2 is 0.3), not as float64 adds them.
func TestSumAndProductToleranceIsExact(t *testing.T) {
	zero := 0.0
	off := false
	v, err := contract.NewValidator([]byte(`{"type":"object"}`), "", contract.Rules{NoExtraKeys: &off,
		Products: []contract.ProductRule{{Items: "/items", Result: "amount", Factors: []string{"quantity", "price"}}},
		Sums:     []contract.SumRule{{Items: "/items", Field: "amount", Total: "/total"}, {Items: "/parts", Field: "x", Total: "/whole", Tolerance: &zero}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		amount, total, whole string
		bad                  string // the rules that fail
	}{
		{"10000000000000.01", "10000000000000.02", "0.3", ""},
		{"10000000000000.02", "10000000000000.02", "0.3", "product"},
		{"9999999999999.99", "10000000000000.00", "0.3", ""},
		{"9999999999999.98", "9999999999999.98", "0.3", "product"},
		{"10000000000000.01", "10000000000000.03", "0.3", ""},
		{"10000000000000.01", "10000000000000.04", "0.3", "sum"},
		{"10000000000000.01", "10000000000000.01", "0.3", ""},
		{"10000000000000.01", "10000000000000.00", "0.3", "sum"},
		{"10000000000000.01", "10000000000000.02", "0.30000000000000004", "sum"},
		{"10000000000000.01", "10000000000000.02", "0.30", ""},
	} {
		out := `{"items":[{"quantity":2,"price":5000000000000,"amount":` + c.amount + `},{"quantity":1,"price":0.01,"amount":0.01}],` +
			`"total":` + c.total + `,"parts":[{"x":0.1},{"x":0.2}],"whole":` + c.whole + `}`
		_, vs := v.Validate(out)
		var rules []string
		for _, v := range vs {
			rules = append(rules, v.Rule)
		}
		if got := strings.Join(rules, ","); got != c.bad {
			t.Errorf("amount %s, total %s, whole %s: %v, want %q to fail", c.amount, c.total, c.whole, vs, c.bad)
		}
	}
}

// A product whose float64 computation underflows (1e-200 * 1e-200 is 0 in
// float64) is decided exactly too.
func TestProductToleranceSurvivesUnderflow(t *testing.T) {
	zero, off := 0.0, false
	v, err := contract.NewValidator([]byte(`{"type":"object"}`), "", contract.Rules{NoExtraKeys: &off,
		Products: []contract.ProductRule{{Items: "/items", Result: "r", Factors: []string{"a", "b", "c"}, Tolerance: &zero}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for out, want := range map[string]int{
		`{"items":[{"a":1e-200,"b":1e-200,"c":1e200,"r":1e-200}]}`:   0,
		`{"items":[{"a":1e-200,"b":1e-200,"c":1e200,"r":1.1e-200}]}`: 1,
		`{"items":[{"a":0,"b":1e-200,"c":1e200,"r":0}]}`:             0,
	} {
		if _, vs := v.Validate(out); len(vs) != want {
			t.Errorf("%s: %v, want %d violations", out, vs, want)
		}
	}
}
