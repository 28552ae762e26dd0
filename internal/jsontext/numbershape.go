package jsontext

import "fmt"

// numberShape is what a JSON number holds as far as PostgreSQL's numeric is
// concerned: where its first significant digit is, how many digits it has
// after the point and its exponent.
type numberShape struct {
	neg, zero bool
	lead      int   // the power of ten of the first digit that is not 0, before the exponent (0 when zero)
	frac      int   // digits after the decimal point as written, trailing zeros included
	exp       int64 // the exponent; past maxExponent in magnitude it is cut there plus a little
}

// parseNumber reads the JSON number tok; ok is false when tok is not one.
func parseNumber(tok []byte) (n numberShape, ok bool) {
	i, end := 0, len(tok)
	if i < end && tok[i] == '-' {
		n.neg = true
		i++
	}
	intStart := i
	for i < end && isDigit(tok[i]) {
		i++
	}
	intDigits := i - intStart
	if intDigits == 0 || intDigits > 1 && tok[intStart] == '0' {
		return n, false
	}
	n.lead, n.zero = intDigits-1, tok[intStart] == '0'
	if i < end && tok[i] == '.' {
		i++
		fracStart := i
		for i < end && isDigit(tok[i]) {
			if n.zero && tok[i] != '0' {
				n.lead, n.zero = fracStart-i-1, false
			}
			i++
		}
		if n.frac = i - fracStart; n.frac == 0 {
			return n, false
		}
	}
	if i < end && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		neg := i < end && tok[i] == '-'
		if i < end && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		expStart := i
		for i < end && isDigit(tok[i]) {
			if n.exp <= maxExponent { // past it the value no longer matters
				n.exp = n.exp*10 + int64(tok[i]-'0')
			}
			i++
		}
		if i == expStart {
			return n, false
		}
		if neg {
			n.exp = -n.exp
		}
	}
	if n.zero {
		n.lead = 0
	}
	return n, i == end
}

// outOfRange says what puts the number beyond numeric's range ("" when it is
// within).
func (n numberShape) outOfRange() string {
	switch {
	case n.exp > maxExponent || n.exp < -maxExponent:
		return fmt.Sprintf("an exponent beyond ±%d", maxExponent)
	case int64(n.frac)-n.exp > MaxFracDigits:
		return fmt.Sprintf("%d digits after the decimal point", int64(n.frac)-n.exp)
	case !n.zero && int64(n.lead)+n.exp >= MaxIntDigits:
		return fmt.Sprintf("%d digits before the decimal point", int64(n.lead)+n.exp+1)
	}
	return ""
}

// written is how many characters PostgreSQL writes the number out in (jsonb
// output, numeric_out), for a number within range: a '-' unless it is zero,
// its digits before the point (at least "0"), and, when its scale (digits
// after the point as sent, less the exponent) is above 0, the point and that
// many digits. 1e3 is "1000", 1.50e-2 "0.0150", -0e-2 "0.00".
func (n numberShape) written() int64 {
	var w int64 = 1 // the digits before the point: "0" when there are none
	if !n.zero {
		if d := int64(n.lead) + n.exp + 1; d > 1 {
			w = d
		}
		if n.neg {
			w++
		}
	}
	if scale := int64(n.frac) - n.exp; scale > 0 {
		w += 1 + scale
	}
	return w
}
