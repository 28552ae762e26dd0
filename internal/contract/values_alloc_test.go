package contract

import (
	"encoding/json"
	"testing"
)

// enum and equal compare ordinary values on the request path: no allocation,
// neither for a match nor for a mismatch (the paths resolve builds are
// another matter).
func TestSameValueDoesNotAllocate(t *testing.T) {
	allowed := normalize([]any{1, 2, 3.5, "x", true, nil, 12.5}).([]any)
	values := []any{json.Number("3.50"), json.Number("2"), json.Number("12.5"), json.Number("7"), json.Number("9007199254740993"),
		"x", "y", true, nil, map[string]any{"a": json.Number("1")}, []any{json.Number("1")}}
	n := testing.AllocsPerRun(100, func() {
		for _, x := range values {
			for _, a := range allowed {
				sameValue(x, a)
			}
			sameValue(x, x)
		}
		sameValue(json.Number("1234.5"), json.Number("1234.50"))
		sameValue(json.Number("-0"), json.Number("0.0e7"))
	})
	if n != 0 {
		t.Fatalf("sameValue allocates %v times", n)
	}
}

func TestDecimalEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"1", "1.0", true}, {"100", "1e2", true}, {"100", "1E+2", true}, {"0.001", "1e-3", true},
		{"-0", "0", true}, {"0e99999999999999999999", "0", true}, {"-1.50", "-15e-1", true},
		{"12345678901234567890", "1.234567890123456789e19", true}, {"9007199254740992", "9.007199254740992e15", true},
		{"9007199254740993", "9007199254740992", false}, {"1", "-1", false}, {"1e-400", "0", false},
		{"1e-99999999999999999999", "1e-99999999999999999998", false}, {"10", "1", false}, {"0.1", "0.01", false},
		{"1e400", "10e399", true}, {"x", "x", true}, {"x", "y", false},
	} {
		if got := decimalEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("decimalEqual(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := decimalEqual(tc.b, tc.a); got != tc.want {
			t.Errorf("decimalEqual(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}
