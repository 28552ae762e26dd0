package jsontext

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// A job's input is stored as jsonb, and read back with each number in
// PostgreSQL's spelling (numeric_out: plain decimal, no exponent, no sign on
// zero). What renders a job's prompt from the input as sent (the first run)
// reads its numbers in that spelling too (WrittenOut), so that every render
// of a job sees the same text, and one accepted is never refused later for
// its length (a number printed in a loop).

// WrittenOut returns how PostgreSQL writes out the JSON number num once it is
// stored in jsonb, and whether that differs from num: an exponent is written
// out (1e2 is 100, 1.5E-3 is 0.0015, 100e-2 is 1.00: the digits after the
// point as sent, less the exponent) and a zero loses its sign (-0 is 0, -0.0
// is 0.0); any other number is written as sent. A number beyond numeric's
// range, or that takes more than MaxNumberGrowth characters more written out
// (CheckNumbers refuses both before anything is stored), or text that is
// not a JSON number, is returned as it is, with false.
func WrittenOut(num string) (string, bool) {
	if !strings.ContainsAny(num, "eE") && !strings.HasPrefix(num, "-0") {
		return num, false // the common case: written as sent
	}
	n, ok := parseNumber([]byte(num))
	if !ok || n.outOfRange() != "" || n.written()-int64(len(num)) > MaxNumberGrowth {
		return num, false
	}
	mant, exp := num, int64(0)
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		mant = num[:i]
		exp, _ = strconv.ParseInt(num[i+1:], 10, 64) // within ±maxExponent: in range
	}
	mant = strings.TrimPrefix(mant, "-")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	scale := int64(len(frac)) - exp // digits after the point written out
	var b strings.Builder
	b.Grow(int(n.written()))
	if n.zero {
		b.WriteByte('0')
		if scale > 0 {
			b.WriteByte('.')
			b.WriteString(strings.Repeat("0", int(scale)))
		}
		return b.String(), b.String() != num
	}
	if n.neg {
		b.WriteByte('-')
	}
	if scale <= 0 {
		digits += strings.Repeat("0", int(-scale))
		scale = 0
	} else if int64(len(digits)) <= scale {
		digits = strings.Repeat("0", int(scale)-len(digits)+1) + digits
	}
	whole, after := digits[:len(digits)-int(scale)], digits[len(digits)-int(scale):]
	if whole = strings.TrimLeft(whole, "0"); whole == "" {
		whole = "0"
	}
	b.WriteString(whole)
	if scale > 0 {
		b.WriteByte('.')
		b.WriteString(after)
	}
	return b.String(), b.String() != num
}

// MayRespell reports whether JSON text b may hold a number that PostgreSQL
// writes out otherwise than as written (WrittenOut): one with an exponent, or
// a negative zero. false means it holds none; true may come from text inside
// a string too ("2e4 units"), which the caller finds out by reading the
// numbers. Cheap: it reads the text eight bytes at a time and skips those
// without a digit followed by an e, or a '-'.
func MayRespell(b []byte) bool {
	i := 0
	for ; i+9 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if digitBytes(w)&eBytes(binary.LittleEndian.Uint64(b[i+1:])) != 0 {
			return true
		}
		if minusBytes(w) != 0 {
			for j := i; j < i+8; j++ {
				if b[j] == '-' && negativeZero(b, j) {
					return true
				}
			}
		}
	}
	for ; i < len(b); i++ {
		if isDigit(b[i]) && i+1 < len(b) && b[i+1]|0x20 == 'e' || b[i] == '-' && negativeZero(b, i) {
			return true
		}
	}
	return false
}

// minusBytes masks the bytes of w that are '-'.
func minusBytes(w uint64) uint64 {
	y := w ^ '-'*byteOnes // a '-' is now 0
	return ^(((y & byteLow7s) + byteLow7s) | y) & allBytes
}

// negativeZero reports whether the '-' at b[at] starts a negative zero
// without an exponent (-0, -0.00; one with an exponent MayRespell finds by
// its e).
func negativeZero(b []byte, at int) bool {
	j := at + 1
	if j >= len(b) || b[j] != '0' {
		return false
	}
	j++
	if j < len(b) && b[j] == '.' {
		j++
		for j < len(b) && b[j] == '0' {
			j++
		}
	}
	return j == len(b) || !isDigit(b[j])
}
