package prompt

import (
	"regexp"
	"strconv"
	"strings"
)

// wholeState is what exactWhole found a number to be.
type wholeState int

const (
	wholeInRange    wholeState = iota // a whole number within int's range
	wholeFraction                     // a number with a fraction
	wholeOutOfRange                   // a whole number outside int's range
	wholeUnread                       // not a number it reads (.inf, .nan)
)

// yamlDecimal is YAML's plain float (yaml.v3's yamlStyleFloat, underscores
// removed), in parts: sign, digits of a number starting with its point,
// integer digits, fraction digits, exponent.
var yamlDecimal = regexp.MustCompile(`^([-+]?)(?:\.([0-9]+)|([0-9]+)(?:\.([0-9]*))?)(?:[eE]([-+]?[0-9]+))?$`)

// exactWhole reads text, a number YAML tags !!float, as the decimal written
// (not through a float64, which rounds past 2^53 and loses a small
// fraction): its value, when it is whole and within int's range. The
// digits are compared as text, so a long exponent costs nothing.
func exactWhole(text string) (int64, wholeState) {
	plain := strings.ReplaceAll(text, "_", "") // as yaml.v3 reads it
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return inIntRange(i) // an integer tagged !!float (!!float 0x64)
	}
	m := yamlDecimal.FindStringSubmatch(plain)
	if m == nil {
		return 0, wholeUnread
	}
	sign, frac := m[1], m[2]+m[4]
	digits := strings.TrimLeft(m[3]+frac, "0")
	if digits == "" {
		return 0, wholeInRange // zero, however written
	}
	exp := 0
	if m[5] != "" {
		e, err := strconv.Atoi(m[5])
		if err != nil || e < -1<<40 || e > 1<<40 { // far beyond any digit count
			if strings.HasPrefix(m[5], "-") {
				return 0, wholeFraction
			}
			return 0, wholeOutOfRange
		}
		exp = e
	}
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	if exp < 0 {
		return 0, wholeFraction // its last digit, not 0, is after the point
	}
	if len(digits)+exp > 19 {
		return 0, wholeOutOfRange // 20 digits or more: past int64
	}
	i, err := strconv.ParseInt(sign+digits+strings.Repeat("0", exp), 10, 64)
	if err != nil {
		return 0, wholeOutOfRange
	}
	return inIntRange(i)
}

// inIntRange is i, and whether int (32 bits on some platforms) holds it.
func inIntRange(i int64) (int64, wholeState) {
	if int64(int(i)) != i {
		return 0, wholeOutOfRange
	}
	return i, wholeInRange
}
