package contract_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

func TestCompareNumbers(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	cases := []struct {
		a, b any
		want int
	}{
		{n("10"), n("10.0"), 0},
		{n("10"), n("1e1"), 0},
		{n("10"), 10, 0},
		{n("0"), n("-0.0"), 0},
		{n("0"), 0.0, 0},
		{n("9"), n("10"), -1},
		{n("10"), 9, 1},
		{n("12.5"), 12, 1},
		{n("-12.5"), -12, -1},
		{n("-1"), n("0"), -1},
		{n("0.05"), n("0.5"), -1},
		{n("9007199254740993"), n("9007199254740992"), 1}, // the same float64
		{n("1e400"), math.MaxFloat64, 1},
		{n("-1e400"), -math.MaxFloat64, -1},
		{n("1.10"), 1.1, 0},
		{n("123"), n("1234"), -1},
		{n("1230"), n("123e1"), 0},
		{uint64(math.MaxUint64), n("18446744073709551615"), 0},
		{n("0.1"), 0.1, 0}, // 0.1 the float64 literal reads as the decimal 0.1
	}
	for _, c := range cases {
		got, ok := contract.CompareNumbers(c.a, c.b)
		if !ok || got != c.want {
			t.Errorf("CompareNumbers(%v, %v) = %d, %v; want %d", c.a, c.b, got, ok, c.want)
		}
		if back, ok := contract.CompareNumbers(c.b, c.a); !ok || back != -c.want {
			t.Errorf("CompareNumbers(%v, %v) = %d, %v; want %d", c.b, c.a, back, ok, -c.want)
		}
	}
	for _, bad := range [][2]any{{n("1"), "1"}, {n("x"), 1}, {math.NaN(), 1}, {math.Inf(1), 1}, {n("1e99999999999999999999"), 1}, {nil, 1}, {true, 1}} {
		if _, ok := contract.CompareNumbers(bad[0], bad[1]); ok {
			t.Errorf("CompareNumbers(%v, %v) ok; want not comparable", bad[0], bad[1])
		}
	}
}

func TestNumberInt64(t *testing.T) {
	for s, want := range map[string]int64{"12": 12, "12.0": 12, "1.2e1": 12, "-0": 0, "0.0e5": 0, "-3": -3, "1e18": 1e18, "9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64, "-92233720368547758.08e2": math.MinInt64, "120e-1": 12} {
		if got, ok := contract.NumberInt64(json.Number(s)); !ok || got != want {
			t.Errorf("NumberInt64(%s) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"12.5", "1e-1", "9223372036854775808", "1e19", "1e400", "x", ""} {
		if got, ok := contract.NumberInt64(json.Number(s)); ok {
			t.Errorf("NumberInt64(%s) = %d; want not a whole number within int64", s, got)
		}
	}
}
