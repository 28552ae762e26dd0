package contract

import (
	"encoding/json"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// A product or sum rule's tolerance is absolute and exact: amounts that
// differ by more than it, as written in decimal, are a violation however
// large they are. float64 decides quickly when the difference it computes
// is far enough from the tolerance that its rounding cannot matter
// (errBound, from the magnitudes involved); otherwise, or when the values
// are close to it — at 10^13 one float64 step is 0.002 — the decision is
// made exactly from the numbers as written (a json.Number's text, a Go float
// by its shortest decimal, as normalize reads it): in 64-bit integers when
// they fit (fixed, below), else with math/big.

// unitRoundoff is float64's relative rounding error, 2^-53: reading a
// decimal, multiplying or adding two float64s is within it of the exact result.
const unitRoundoff = 0x1p-53

// maxExactText bounds the text of a number the exact decision reads: an
// amount is a few dozen characters at most, and one of thousands of digits
// would make the decision cost in proportion to their square. Past it the
// rule decides in float64 alone, give or take its rounding (errBound).
const maxExactText = 100

// withinTol reports whether two values differ by at most tol, exactly. fa and
// fb are the values computed in float64, at most errBound apart from the
// exact ones together; fast decides exactly without math/big, ok false when
// it cannot (see fixed); exact computes the exact difference, ok false when it
// cannot (a number it cannot read). diff is the exact difference when it was
// computed, else nil. A computation that overflowed is within nothing.
func withinTol(fa, fb, tol, errBound float64, fast func() (within, ok bool), exact func() (diff *big.Rat, ok bool)) (within bool, diff *big.Rat) {
	if overflows(fa) || overflows(fb) {
		return false, nil
	}
	d := math.Abs(fa - fb)
	// The subtraction's own rounding, the tolerance's (a float64 of its
	// decimal) and a floor for results in the subnormal range, twice over.
	slack := 2 * (errBound + unitRoundoff*(d+tol) + 0x1p-1000)
	switch {
	case d > tol+slack:
		return false, nil
	case d < tol-slack:
		return true, nil
	}
	if within, ok := fast(); ok {
		return within, nil
	}
	diff, ok := exact()
	if !ok {
		return d <= tol+slack, nil
	}
	return new(big.Rat).Abs(diff).Cmp(decimalRat(tol)) <= 0, diff
}

// underflows reports whether a product p of nonzero factors lost precision
// to float64's subnormal range (or to 0), where rounding is no longer
// relative: 1e-200 * 1e-200 * 1e200 computes as 0.
func underflows(p float64, nonzero bool) bool {
	return nonzero && math.Abs(p) < 0x1p-1022
}

// decimalRat is f's shortest decimal (0.01 for the float64 nearest it), exactly.
func decimalRat(f float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return r
}

// exactNumber is the exact value of a number of a document, as written; ok
// false for what toFloat would refuse or a text past maxExactText.
func exactNumber(x any) (*big.Rat, bool) {
	switch n := x.(type) {
	case json.Number:
		if len(n) > maxExactText {
			return nil, false
		}
		return new(big.Rat).SetString(string(n))
	case float64:
		if overflows(n) {
			return nil, false
		}
		return decimalRat(n), true
	case float32:
		return exactNumber(float64(n))
	case int:
		return new(big.Rat).SetInt64(int64(n)), true
	case int64:
		return new(big.Rat).SetInt64(n), true
	case int32:
		return new(big.Rat).SetInt64(int64(n)), true
	case uint64:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(n)), true
	case uint:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(uint64(n))), true
	}
	return nil, false
}

// exactProduct is the product of xs, exactly.
func exactProduct(xs []any) (*big.Rat, bool) {
	p := big.NewRat(1, 1)
	for _, x := range xs {
		r, ok := exactNumber(x)
		if !ok {
			return nil, false
		}
		p.Mul(p, r)
	}
	return p, true
}

// ratFloat is r as the float64 nearest it, for messages.
func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

// The exact decision of ordinary amounts is made without math/big: a number
// of at most 19 significant digits is a fixed, an integer mantissa and a
// power of ten, and products, sums and the comparison with the tolerance are
// computed in uint64 with overflow checks. Only what overflows them (or a
// longer number) goes to math/big (exactNumber), so a tolerance of 0, always
// decided exactly, costs no allocation per item.

// fixed is (-1 if neg) * m * 10^e, exactly; m has no trailing zeros (m = 0
// is zero, whatever e).
type fixed struct {
	neg bool
	m   uint64
	e   int
}

// maxFixedExp bounds a fixed's exponent, far past any float64's, so that
// sums of exponents cannot overflow an int.
const maxFixedExp = 1 << 20

var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// parseFixed reads a JSON number's text; ok false for more than 19
// significant digits or a text that is not a JSON number.
func parseFixed[T string | []byte](s T) (x fixed, ok bool) {
	i, n := 0, len(s)
	if i < n && s[i] == '-' {
		x.neg = true
		i++
	}
	digits, point, seen := 0, false, false
	for ; i < n; i++ {
		c := s[i]
		switch {
		case c == '.' && !point:
			point = true
			continue
		case c < '0' || c > '9':
		default:
			seen = true
			if point {
				x.e--
			}
			if x.m == 0 && c == '0' {
				continue
			}
			if digits == 19 {
				return fixed{}, false
			}
			x.m = x.m*10 + uint64(c-'0')
			digits++
			continue
		}
		break
	}
	if !seen {
		return fixed{}, false
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < n && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		exp, edigits := 0, 0
		for ; i < n && s[i] >= '0' && s[i] <= '9'; i++ {
			if exp = exp*10 + int(s[i]-'0'); exp > maxFixedExp {
				return fixed{}, false
			}
			edigits++
		}
		if edigits == 0 {
			return fixed{}, false
		}
		if eneg {
			exp = -exp
		}
		x.e += exp
	}
	if i != n {
		return fixed{}, false
	}
	return x.norm(), true
}

// norm strips m's trailing zeros.
func (x fixed) norm() fixed {
	if x.m == 0 {
		return fixed{}
	}
	for x.m%10 == 0 {
		x.m /= 10
		x.e++
	}
	return x
}

// fixedOf is the exact value of a number of a document, as exactNumber reads
// it; ok false when it does not fit a fixed.
func fixedOf(x any) (fixed, bool) {
	switch n := x.(type) {
	case json.Number:
		return parseFixed(string(n))
	case float64:
		if overflows(n) {
			return fixed{}, false
		}
		var buf [32]byte
		return parseFixed(strconv.AppendFloat(buf[:0], n, 'g', -1, 64))
	case float32:
		return fixedOf(float64(n))
	case int:
		return fixedInt(int64(n)), true
	case int64:
		return fixedInt(n), true
	case int32:
		return fixedInt(int64(n)), true
	case uint64:
		return fixed{m: n}.norm(), true
	case uint:
		return fixed{m: uint64(n)}.norm(), true
	}
	return fixed{}, false
}

func fixedInt(n int64) fixed {
	if n < 0 {
		return fixed{neg: true, m: uint64(-(n + 1)) + 1}.norm()
	}
	return fixed{m: uint64(n)}.norm()
}

// mul is x*y; ok false when it overflows.
func (x fixed) mul(y fixed) (fixed, bool) {
	hi, lo := bits.Mul64(x.m, y.m)
	if hi != 0 || x.e+y.e > maxFixedExp || x.e+y.e < -maxFixedExp {
		return fixed{}, false
	}
	return fixed{neg: x.neg != y.neg, m: lo, e: x.e + y.e}.norm(), true
}

// scaled is m * 10^k, k >= 0; ok false when it overflows.
func scaled(m uint64, k int) (uint64, bool) {
	if m == 0 {
		return 0, true
	}
	if k >= len(pow10) {
		return 0, false
	}
	hi, lo := bits.Mul64(m, pow10[k])
	return lo, hi == 0
}

// align is x's and y's mantissas at their common (smaller) exponent; ok
// false when one overflows, which is then the larger in magnitude.
func align(x, y fixed) (xm, ym uint64, ok bool) {
	if x.e >= y.e {
		xm, ok = scaled(x.m, x.e-y.e)
		return xm, y.m, ok
	}
	ym, ok = scaled(y.m, y.e-x.e)
	return x.m, ym, ok
}

// sub is x-y; ok false when it overflows.
func (x fixed) sub(y fixed) (fixed, bool) {
	y.neg = !y.neg
	switch {
	case y.m == 0:
		return x, true
	case x.m == 0:
		return y, true
	}
	xm, ym, ok := align(x, y)
	if !ok {
		return fixed{}, false
	}
	r := fixed{e: min(x.e, y.e)}
	switch {
	case x.neg == y.neg:
		var carry uint64
		r.neg = x.neg
		if r.m, carry = bits.Add64(xm, ym, 0); carry != 0 {
			return fixed{}, false
		}
	case xm >= ym:
		r.neg, r.m = x.neg, xm-ym
	default:
		r.neg, r.m = y.neg, ym-xm
	}
	return r.norm(), true
}

// absAtMost reports whether |x| <= t, t >= 0.
func (x fixed) absAtMost(t fixed) bool {
	if x.m == 0 {
		return true
	}
	xm, tm, ok := align(x, t)
	if !ok {
		return x.e < t.e // the one scaled up overflowed: it is the larger
	}
	return xm <= tm
}

// fixedProduct is the product of xs; ok false when one does not fit a fixed
// or the product overflows.
func fixedProduct(xs []any) (fixed, bool) {
	p := fixed{m: 1}
	for _, x := range xs {
		f, ok := fixedOf(x)
		if !ok {
			return fixed{}, false
		}
		if p, ok = p.mul(f); !ok {
			return fixed{}, false
		}
	}
	return p, true
}

// subnormal reports whether f is in float64's subnormal range, read with a
// relative error up to 1: float64 cannot tell what it computes from it.
func subnormal(f float64) bool {
	return f != 0 && math.Abs(f) < 0x1p-1022
}
