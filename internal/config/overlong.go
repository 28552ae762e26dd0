package config

import (
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// durationSyntax is time.ParseDuration's form: an optional sign, then one or
// more decimal numbers, each with a unit. A value of this form that
// ParseDuration still refuses is too long for a time.Duration.
var durationSyntax = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// maxDurationHours is the largest whole number of hours a time.Duration
// holds (it holds about 292 years).
const maxDurationHours = 2562047

// durationProblem says why s, which time.ParseDuration refused, is no
// duration the router can hold: either it is beyond the largest one, or it
// is not written as a duration. Telling the two apart matters: "is not a
// duration (write it like 24h)" for 3000000h tells the user to write what
// they wrote.
func durationProblem(s string) string {
	if durationSyntax.MatchString(s) {
		if strings.HasPrefix(s, "-") {
			return fmt.Sprintf("is beyond the range of a duration (-%dh to %dh, about 292 years either way): write one within it", maxDurationHours, maxDurationHours)
		}
		return fmt.Sprintf("is longer than the largest duration the router can hold (%dh, about 292 years): write a shorter one (a duration of years is as good as forever)", maxDurationHours)
	}
	return "is not a duration (write it like 500ms, 10s or 24h)"
}

// integerProblem says why s, a scalar that does not decode into the integer
// type t (or overflows it), is refused: written as a whole number but out of
// t's range, or not an integer at all (fraction says it has a fractional
// part).
func integerProblem(s string, t reflect.Type, fraction bool) string {
	v, ok := wholeNumber(s)
	if fraction || !ok {
		return expects(t)
	}
	lo, hi := intRange(t)
	if v.Cmp(new(big.Float).SetInt(hi)) > 0 {
		return fmt.Sprintf("is too large (at most %s): write a smaller number", hi)
	}
	if v.Cmp(new(big.Float).SetInt(lo)) < 0 {
		if lo.Sign() == 0 {
			return "is negative, and this setting cannot be: write 0 or more"
		}
		return fmt.Sprintf("is too small (at least %s): write a larger number", lo)
	}
	return expects(t)
}

// overflows reports an integer setting written as a whole number beyond its
// type's range that yaml.v3 would not refuse: one it reads as a float
// (-99999999999999999999 is -1e20 to it) and converts, so that it became
// the most negative int64 and was judged as that.
func overflows(n *yaml.Node, t reflect.Type) bool {
	if !isInteger(t) || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
		return false
	}
	v, ok := wholeNumber(n.Value)
	if !ok {
		return false
	}
	lo, hi := intRange(t)
	return v.Cmp(new(big.Float).SetInt(hi)) > 0 || v.Cmp(new(big.Float).SetInt(lo)) < 0
}

// wholeNumber is s as a number with no fractional part (digits, _ between
// them, 0x… or an exponent, as YAML writes numbers), if it is one.
func wholeNumber(s string) (*big.Float, bool) {
	s = strings.ReplaceAll(s, "_", "")
	if i, ok := new(big.Int).SetString(s, 0); ok {
		return new(big.Float).SetInt(i), true
	}
	f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return nil, false
	}
	return f, true
}

// intRange is the range of the integer kind t.
func intRange(t reflect.Type) (lo, hi *big.Int) {
	bits := uint(t.Bits())
	one := big.NewInt(1)
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return new(big.Int), new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
	}
	hi = new(big.Int).Sub(new(big.Int).Lsh(one, bits-1), one)
	return new(big.Int).Neg(new(big.Int).Add(hi, one)), hi
}

// isInteger reports whether t is an integer kind.
func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}
