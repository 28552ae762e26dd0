package contract

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
)

// CompareNumbers compares two numbers by their exact decimal value: a
// json.Number (as ParseJSON decodes them) by its text, a Go int, uint or float
// by its value. 10 equals 10.0 and 1e1; 9007199254740993 is more than
// 9007199254740992. It returns -1, 0 or +1, and ok false when either is not a
// number it can read: another type, NaN, an infinity, malformed text, or an
// exponent beyond ±10^15.
func CompareNumbers(a, b any) (c int, ok bool) {
	la, okA := numLiteral(a)
	lb, okB := numLiteral(b)
	if !okA || !okB {
		return 0, false
	}
	x, y := parseDecimal(la), parseDecimal(lb)
	if !x.ok || !y.ok {
		return 0, false
	}
	if sx, sy := x.sign(), y.sign(); sx != sy || sx == 0 {
		return cmp.Compare(sx, sy), true
	}
	c = x.compareMagnitude(&y)
	if x.neg {
		c = -c
	}
	return c, true
}

// NumberInt64 returns the value of a JSON number that is a whole number within
// int64, however it is written (12, 12.0, 1.2e1, -0); ok is false for a
// fraction (12.5), a whole number beyond int64, or text that is not a number.
func NumberInt64(n json.Number) (i int64, ok bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	d := parseDecimal(string(n))
	switch {
	case !d.ok:
		return 0, false
	case d.zero:
		return 0, true
	case d.lastExp < 0 || d.lastExp+(d.hi-d.lo) > 18:
		return 0, false // a fraction, or 20 digits or more
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	for i := d.lo; i <= d.hi; i++ {
		b.WriteByte(d.digit(i))
	}
	b.WriteString(strings.Repeat("0", d.lastExp))
	i, err := strconv.ParseInt(b.String(), 10, 64)
	return i, err == nil
}

// sign is -1, 0 or +1 (-0 is 0).
func (d *decimal) sign() int {
	switch {
	case d.zero:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// compareMagnitude compares |d| and |e|, both non-zero: the power of ten of
// the first significant digit, then the digits, then how many there are.
func (d *decimal) compareMagnitude(e *decimal) int {
	nd, ne := d.hi-d.lo, e.hi-e.lo
	if c := cmp.Compare(d.lastExp+nd, e.lastExp+ne); c != 0 {
		return c
	}
	for i := 0; i <= min(nd, ne); i++ {
		if c := cmp.Compare(int(d.digit(d.lo+i)), int(e.digit(e.lo+i))); c != 0 {
			return c
		}
	}
	return cmp.Compare(nd, ne)
}
