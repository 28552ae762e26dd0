package contract

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
)

// A product or sum rule's tolerance is absolute and exact: amounts that
// differ by more than it, as written in decimal, are a violation however
// large they are. float64 decides quickly when the difference it computes
// is far enough from the tolerance that its rounding cannot matter
// (errBound, from the magnitudes involved); otherwise, or when the values
// are close to it — at 10^13 one float64 step is 0.002 — the decision is
// made exactly, with math/big, from the numbers as written (a json.Number's
// text, a Go float by its shortest decimal, as normalize reads it).

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
// exact ones together; exact computes the exact difference, ok false when it
// cannot (a number it cannot read). diff is the exact difference when it was
// computed, else nil. A computation that overflowed is within nothing.
func withinTol(fa, fb, tol, errBound float64, exact func() (diff *big.Rat, ok bool)) (within bool, diff *big.Rat) {
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
