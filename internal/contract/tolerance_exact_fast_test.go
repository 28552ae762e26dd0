package contract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A tolerance of 0 is always decided exactly, and the exact decision of
// ordinary amounts must not cost math/big on every item: a matching invoice
// allocates about as much at tolerance 0 as at 0.01.
func TestZeroToleranceIsNotAllMathBig(t *testing.T) {
	off := false
	validator := func(tol float64) *contract.Validator {
		v, err := contract.NewValidator([]byte(`{"type":"object"}`), "", contract.Rules{
			NoExtraKeys: &off,
			Sums:        []contract.SumRule{{Items: "/items", Field: "amount", Total: "/total", Tolerance: &tol}},
			Products:    []contract.ProductRule{{Items: "/items", Result: "amount", Factors: []string{"quantity", "price"}, Tolerance: &tol}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var items []string
	total := 0
	for i := 0; i < 500; i++ {
		items = append(items, fmt.Sprintf(`{"quantity":3,"price":%d.25,"amount":%d.75}`, i, 3*i))
		total += 3*i*100 + 75
	}
	out := fmt.Sprintf(`{"items":[%s],"total":%d.%02d}`, strings.Join(items, ","), total/100, total%100)
	exact, loose := validator(0), validator(0.01)
	for _, v := range []*contract.Validator{exact, loose} {
		if _, vs := v.Validate(out); len(vs) != 0 {
			t.Fatalf("a matching invoice: %v", vs[:1])
		}
	}
	a0 := testing.AllocsPerRun(5, func() { exact.Validate(out) })
	a1 := testing.AllocsPerRun(5, func() { loose.Validate(out) })
	t.Logf("allocations a validation: %.0f at tolerance 0, %.0f at 0.01", a0, a1)
	if a0 > 1.5*a1 {
		t.Fatalf("tolerance 0: %.0f allocations a validation; tolerance 0.01: %.0f", a0, a1)
	}
}

// A subnormal term is read with a large relative error: float64 cannot tell
// whether x*m matches the total, so the exact decision must make it.
func TestSubnormalTermIsDecidedExactly(t *testing.T) {
	zero, off := 0.0, false
	v, err := contract.NewValidator([]byte(`{"type":"object"}`), "", contract.Rules{
		NoExtraKeys: &off,
		Sums:        []contract.SumRule{{Items: "/items", Field: "x", Multiply: "m", Total: "/total", Tolerance: &zero}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{
		`{"items":[{"x":1.2345678901234e-318,"m":1e300}],"total":1.2345678901234e-18}`,
		`{"items":[{"x":1e300,"m":1.2345678901234e-318}],"total":1.2345678901234e-18}`,
	} {
		if _, vs := v.Validate(out); len(vs) != 0 {
			t.Errorf("%s: %v; want none (total is x*m exactly)", out, vs)
		}
	}
	p, err := contract.NewValidator([]byte(`{"type":"object"}`), "", contract.Rules{
		NoExtraKeys: &off,
		Products:    []contract.ProductRule{{Items: "/items", Result: "r", Factors: []string{"x", "m"}, Tolerance: &zero}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := `{"items":[{"x":1.2345678901234e-318,"m":1e300,"r":1.2345678901234e-18}]}`
	if _, vs := p.Validate(out); len(vs) != 0 {
		t.Errorf("%s: %v; want none (r is x*m exactly)", out, vs)
	}
}
