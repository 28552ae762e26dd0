package jsontext

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// PostgreSQL stores a jsonb number as its numeric type, which holds at most
// 131072 digits before the decimal point and 16383 after it (the digits
// written after the point count, trailing zeros included; an exponent moves
// the point), and whose input refuses an exponent of ±1073741823 or more
// whatever the digits (PostgreSQL 15; 0e400000 is stored, 0e1073741823 is
// not). encoding/json takes any number, so a caller's 1e400000 reaches the
// database, which refuses the whole statement ("value overflows numeric
// format", SQLSTATE 22003).
const (
	// MaxIntDigits is how many digits numeric holds before the decimal point.
	MaxIntDigits = 131072
	// MaxFracDigits is how many digits numeric holds after the decimal point.
	MaxFracDigits = 16383
	// maxExponent is the largest exponent magnitude PostgreSQL's input takes.
	maxExponent = 1073741822
)

// minLongRun is the shortest run of digits (not an exponent's) that can put
// a number out of range: one out of range has more than MaxFracDigits digits
// after the point counting its exponent, or more than MaxIntDigits before, so
// either its exponent is 8192 or more (four digits at least) or it has a run
// of half of MaxFracDigits + 1 digits or more.
const minLongRun = (MaxFracDigits + 1) / 2

// NumberError names a number in a JSON text that PostgreSQL's jsonb cannot
// hold, where it is and why.
type NumberError struct {
	Offset int    // byte offset of the number in the text
	Path   string // its member: "input.amount", "messages[0].content"; "" for the text itself
	Number string // how it starts, as written (a long number is cut)
	Reason string // what is beyond numeric's range, in words
}

func (e *NumberError) Error() string {
	at := fmt.Sprintf("at offset %d", e.Offset)
	if e.Path != "" {
		at = fmt.Sprintf("at %s (offset %d)", e.Path, e.Offset)
	}
	return fmt.Sprintf("the number %s %s has %s: the router stores JSON numbers as PostgreSQL's numeric, "+
		"which holds at most %d digits before the decimal point and %d after it, counting the exponent", e.Number, at, e.Reason, MaxIntDigits, MaxFracDigits)
}

// CheckNumbers returns the first number in JSON text b that PostgreSQL's
// jsonb cannot hold, or nil when every number fits numeric. Text that is not
// JSON gets no error it would not get as JSON; strings are not numbers.
//
// It is cheap on the hot path: it looks at every fourth byte for a digit, and
// only a run of four digits or more that is an exponent, or a run of 8192
// digits or more, is read as a number; only such a number that is out of
// range (or text inside a string that reads like one) makes it walk the
// whole text to tell a number from a string and name the member.
func CheckNumbers(b []byte) *NumberError {
	for i := 3; i < len(b); {
		if !isDigit(b[i]) {
			i += 4
			continue
		}
		start, end := i, i+1
		for start > 0 && isDigit(b[start-1]) {
			start--
		}
		for end < len(b) && isDigit(b[end]) {
			end++
		}
		if end-start >= 4 && (end-start >= minLongRun || isExponent(b, start)) {
			// The whole number around the run: outside a string, a number
			// is all the number bytes between two others (or the text's ends).
			for start > 0 && isNumberByte(b[start-1]) {
				start--
			}
			for end < len(b) && isNumberByte(b[end]) {
				end++
			}
			if reason, valid := outOfRange(b[start:end]); valid && reason != "" {
				return scanNumbers(b) // a number, or text in a string?
			}
		}
		i = end | 3 // the first position ≡ 3 (mod 4) at or after end
	}
	return nil
}

// isExponent reports whether the run of digits starting at start is a
// number's exponent: after e or E (and a sign), after a digit.
func isExponent(b []byte, start int) bool {
	j := start - 1
	if j >= 0 && (b[j] == '+' || b[j] == '-') {
		j--
	}
	return j >= 1 && (b[j] == 'e' || b[j] == 'E') && isDigit(b[j-1])
}

func isDigit(c byte) bool { return c-'0' < 10 }

// isNumberByte reports whether c can be part of a JSON number.
func isNumberByte(c byte) bool {
	return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// outOfRange says what puts the JSON number tok beyond numeric's range (""
// when it is within); valid is false when tok is not a JSON number.
func outOfRange(tok []byte) (reason string, valid bool) {
	i, n := 0, len(tok)
	if i < n && tok[i] == '-' {
		i++
	}
	intStart := i
	for i < n && isDigit(tok[i]) {
		i++
	}
	intDigits := i - intStart
	if intDigits == 0 || intDigits > 1 && tok[intStart] == '0' {
		return "", false
	}
	// lead is the power of ten of the first digit that is not 0, before the
	// exponent; zero says there is none.
	lead, zero := intDigits-1, tok[intStart] == '0'
	frac := 0
	if i < n && tok[i] == '.' {
		i++
		fracStart := i
		for i < n && isDigit(tok[i]) {
			if zero && tok[i] != '0' {
				lead, zero = fracStart-i-1, false
			}
			i++
		}
		if frac = i - fracStart; frac == 0 {
			return "", false
		}
	}
	var exp int64
	if i < n && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		neg := i < n && tok[i] == '-'
		if i < n && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		expStart := i
		for i < n && isDigit(tok[i]) {
			if exp <= maxExponent { // past it the value no longer matters
				exp = exp*10 + int64(tok[i]-'0')
			}
			i++
		}
		if i == expStart {
			return "", false
		}
		if neg {
			exp = -exp
		}
	}
	switch {
	case i != n:
		return "", false
	case exp > maxExponent || exp < -maxExponent:
		return fmt.Sprintf("an exponent beyond ±%d", maxExponent), true
	case int64(frac)-exp > MaxFracDigits:
		return fmt.Sprintf("%d digits after the decimal point", int64(frac)-exp), true
	case !zero && int64(lead)+exp >= MaxIntDigits:
		return fmt.Sprintf("%d digits before the decimal point", int64(lead)+exp+1), true
	}
	return "", true
}

// scanNumbers walks JSON text b token by token and returns its first number
// that is out of range, with the member that holds it. Text that is not JSON
// is walked as well as it goes, without failing.
func scanNumbers(b []byte) *NumberError {
	type level struct {
		object bool
		key    []byte // an object's current member, quoted as written
		index  int    // an array's current element
	}
	var stack []level
	wantKey := false // the next string is an object's member name
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			end := stringEnd(b, i)
			if wantKey && len(stack) > 0 {
				stack[len(stack)-1].key = b[i:end]
				wantKey = false
			}
			i = end
		case c == '{' || c == '[':
			stack = append(stack, level{object: c == '{'})
			wantKey = c == '{'
			i++
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			wantKey = false
			i++
		case c == ',':
			if len(stack) > 0 {
				top := &stack[len(stack)-1]
				wantKey = top.object
				top.index++
			}
			i++
		case c == '-' || isDigit(c):
			end := i + 1
			for end < len(b) && isNumberByte(b[end]) {
				end++
			}
			if reason, valid := outOfRange(b[i:end]); valid && reason != "" {
				var path strings.Builder
				for _, l := range stack {
					if l.object {
						writeMember(&path, l.key)
					} else {
						path.WriteString("[" + strconv.Itoa(l.index) + "]")
					}
				}
				return &NumberError{Offset: i, Path: path.String(), Number: cut(b[i:end]), Reason: reason}
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// stringEnd is the offset just past the string that starts at b[at] (a
// quote), or len(b) when it does not end.
func stringEnd(b []byte, at int) int {
	for j := at + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++ // the escaped byte
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// writeMember appends an object member's name to a path: .name, or
// ["name"] when the name would not read as one.
func writeMember(path *strings.Builder, quoted []byte) {
	var name string
	if json.Unmarshal(quoted, &name) != nil {
		name = strings.Trim(string(quoted), `"`)
	}
	if name == "" || strings.ContainsAny(name, ".[]\"' \t\r\n") {
		path.WriteString("[" + strconv.Quote(name) + "]")
		return
	}
	if path.Len() > 0 {
		path.WriteByte('.')
	}
	path.WriteString(name)
}

// cut is a number's text for a message: its first 24 bytes, then "…".
func cut(num []byte) string {
	if len(num) <= 24 {
		return string(num)
	}
	return string(num[:24]) + "…"
}
