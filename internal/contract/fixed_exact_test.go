package contract

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand"
	"strconv"
	"testing"
)

// fixedRat is x as a big.Rat, to compare the fixed arithmetic with math/big.
func fixedRat(x fixed) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatUint(x.m, 10) + "e" + strconv.Itoa(x.e))
	if x.neg {
		r.Neg(r)
	}
	return r
}

// randomNumber is a JSON number text of the kinds a document holds, with
// sometimes too many digits for a fixed.
func randomNumber(rng *rand.Rand) string {
	switch rng.Intn(6) {
	case 0:
		return strconv.FormatInt(rng.Int63n(2000)-1000, 10)
	case 1:
		return strconv.FormatFloat(float64(rng.Int63n(2_000_000)-1_000_000)/100, 'f', 2, 64)
	case 2:
		return strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.Intn(40)-20)), 'g', -1, 64)
	case 3:
		return strconv.FormatUint(rng.Uint64(), 10) + "." + strconv.Itoa(rng.Intn(1000))
	case 4:
		return "0.000" + strconv.Itoa(rng.Intn(100000)) + "e" + strconv.Itoa(rng.Intn(60)-30)
	}
	return strconv.FormatInt(rng.Int63(), 10) + "00000"
}

// The fixed arithmetic decides as math/big does whenever it decides at all.
func TestFixedAgreesWithMathBig(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	decided := 0
	for i := 0; i < 20000; i++ {
		a, b, c := randomNumber(rng), randomNumber(rng), randomNumber(rng)
		tol := []float64{0, 0.01, 0.5, 1e-7, 3, 1e21}[rng.Intn(6)]
		fa, okA := parseFixed(a)
		ra, _ := new(big.Rat).SetString(a)
		if okA && fixedRat(fa).Cmp(ra) != 0 {
			t.Fatalf("parseFixed(%s) = %v", a, fa)
		}
		// a - b*c within tol?
		raws := []any{json.Number(b), json.Number(c)}
		p, okP := fixedProduct(raws)
		ft, okT := fixedOf(tol)
		if !okA || !okP || !okT {
			continue
		}
		d, ok := fa.sub(p)
		if !ok {
			continue
		}
		decided++
		want, _ := exactProduct(raws)
		want.Sub(ra, want)
		if fixedRat(d).Cmp(want) != 0 {
			t.Fatalf("%s - %s*%s = %v, want %v", a, b, c, fixedRat(d), want)
		}
		if got, w := d.absAtMost(ft), new(big.Rat).Abs(want).Cmp(decimalRat(tol)) <= 0; got != w {
			t.Fatalf("|%s - %s*%s| <= %v: %v, want %v", a, b, c, tol, got, w)
		}
	}
	if decided < 1000 {
		t.Fatalf("only %d of 20000 decided without math/big", decided)
	}
	for _, c := range []struct {
		a, b, c string
		tol     float64
		within  bool
	}{
		{"10.01", "1", "10", 0.01, true},
		{"9.99", "1", "10", 0.01, true},
		{"10.0100000001", "1", "10", 0.01, false},
		{"-10.02", "-1", "10", 0.01, false},
		{"7.5", "2.5", "3", 0, true},
		{"7.50", "2.5", "3.000", 0, true},
		{"7.5000000000000001", "2.5", "3", 0, false},
		{"1e30", "1", "0", 0.01, false},
		{"1e-30", "1", "0", 1e21, true},
		{"1e21", "1", "0", 1e21, true},
	} {
		a, _ := parseFixed(c.a)
		p, ok1 := fixedProduct([]any{json.Number(c.b), json.Number(c.c)})
		tol, ok2 := fixedOf(c.tol)
		d, ok3 := a.sub(p)
		if !ok1 || !ok2 || !ok3 || d.absAtMost(tol) != c.within {
			t.Errorf("|%s - %s*%s| <= %v: %v (ok %v %v %v), want %v", c.a, c.b, c.c, c.tol, d.absAtMost(tol), ok1, ok2, ok3, c.within)
		}
	}
	for _, x := range []any{int64(math.MinInt64), uint64(math.MaxUint64), 1e-320, -0.0, 0.1, float32(0.1), 123, "x"} {
		f, ok := fixedOf(x)
		r, okR := exactNumber(x)
		if ok != okR || ok && fixedRat(f).Cmp(r) != 0 {
			t.Errorf("fixedOf(%v) = %v %v, exactNumber %v %v", x, f, ok, r, okR)
		}
	}
	for _, s := range []string{"", "-", ".", "1e", "1e+", "1.2.3", "0x10", "Inf", "1e99999999", "12345678901234567890"} {
		if f, ok := parseFixed(s); ok {
			t.Errorf("parseFixed(%q) = %v, want not ok", s, f)
		}
	}
}
