package contract

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// toFloat converts a JSON number (json.Number from the output, or a Go number from
// a decoded rule) to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint:
		return float64(x), true
	}
	return 0, false
}

// normalize prepares a rule's value (decoded from YAML or JSON) for sameValue:
// every finite number becomes a json.Number holding its decimal literal (an int
// exactly, a float64 as the shortest decimal that reads back as it: 0.1 is
// "0.1"), like the numbers of an output, so that comparing them on the request
// path allocates nothing.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = normalize(e)
		}
		return s
	case json.Number, string, bool, nil:
		return v
	}
	if f, ok := toFloat(v); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		if lit, ok := numLiteral(v); ok {
			return json.Number(lit)
		}
	}
	return v
}

// sameValue reports whether two decoded values are equal: objects and arrays
// element by element, strings exactly, numbers by their exact decimal value (2
// equals 2.0 and 2e0; 9007199254740993 does not equal 9007199254740992,
// although both are the same float64). For ordinary values it allocates
// nothing.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !sameValue(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		if y, ok := b.(json.Number); ok && x == y {
			return true // written alike: the common case
		}
	}
	return sameNumber(a, b)
}

// sameNumber compares two numbers exactly. Different float64 values are
// different decimals, so only when the float64s are equal (or a number is
// beyond float64) are the decimal literals compared, digit by digit.
func sameNumber(a, b any) bool {
	fa, okA := toFloat(a)
	fb, okB := toFloat(b)
	if okA && okB && fa != fb {
		return false
	}
	la, okA := numLiteral(a)
	lb, okB := numLiteral(b)
	if !okA || !okB {
		return false
	}
	return la == lb || decimalEqual(la, lb)
}

// numLiteral is the decimal literal of a number: a json.Number's own text (no
// allocation), or the formatted value of a Go number.
func numLiteral(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case uint:
		return strconv.FormatUint(uint64(x), 10), true
	}
	return "", false
}

// decimal is a JSON number literal split up without copying: -?int(.frac)?(e exp)?.
type decimal struct {
	neg      bool
	ip, fp   string // digits before and after the point
	exp      int
	lo, hi   int // first and last non-zero digit of ip+fp; lo > hi for zero
	lastExp  int // the power of ten of digit hi
	zero, ok bool
}

func (d *decimal) digit(i int) byte {
	if i < len(d.ip) {
		return d.ip[i]
	}
	return d.fp[i-len(d.ip)]
}

func parseDecimal(s string) (d decimal) {
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	d.ip, s = s[:i], s[i:]
	if strings.HasPrefix(s, ".") {
		i = 1
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		d.fp, s = s[1:i], s[i:]
	}
	n := len(d.ip) + len(d.fp)
	if n == 0 {
		return d
	}
	d.lo, d.hi = 0, n-1
	for d.lo < n && d.digit(d.lo) == '0' {
		d.lo++
	}
	for d.hi >= d.lo && d.digit(d.hi) == '0' {
		d.hi--
	}
	d.zero = d.lo > d.hi
	if s != "" {
		if s[0] != 'e' && s[0] != 'E' {
			return d
		}
		s = s[1:]
		if !d.zero { // the exponent of zero does not matter
			e, err := strconv.Atoi(s)
			if err != nil || e > 1e15 || e < -1e15 {
				return d // not an exponent, or beyond any sensible one: equal only to itself
			}
			d.exp = e
		}
	}
	d.lastExp = d.exp - len(d.fp) + (n - 1 - d.hi)
	d.ok = true
	return d
}

// decimalEqual reports whether two number literals have the same decimal value
// (-0 equals 0). A literal it cannot read equals only itself.
func decimalEqual(a, b string) bool {
	x, y := parseDecimal(a), parseDecimal(b)
	if !x.ok || !y.ok {
		return a == b
	}
	if x.zero || y.zero {
		return x.zero && y.zero
	}
	if x.neg != y.neg || x.hi-x.lo != y.hi-y.lo || x.lastExp != y.lastExp {
		return false
	}
	for i := 0; i <= x.hi-x.lo; i++ {
		if x.digit(x.lo+i) != y.digit(y.lo+i) {
			return false
		}
	}
	return true
}

// display renders a value as JSON for a message, without json.Marshal's
// escaping for HTML: an operator reads "R&D", not "R\u0026D".
func display(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// fmtNum prints a computed number without float noise (0.1+0.2 prints 0.3).
func fmtNum(f float64) string {
	if math.Abs(f) < 1e15 {
		f = math.Round(f*1e9) / 1e9
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if _, ok := toFloat(v); ok {
		return "number"
	}
	return reflect.TypeOf(v).String()
}
