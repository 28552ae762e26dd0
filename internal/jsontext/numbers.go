package jsontext

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
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

// A number within numeric's range can still be too long for the router:
// PostgreSQL keeps a jsonb number as numeric, which writes it out in plain
// decimal without an exponent each time the JSON is read (1e131000, 8 bytes
// sent, reads back as a 1 and 131000 zeros; 5e-324 as "0." and 323 zeros
// and a 5). 800 such numbers in a 7 KB request read back as 105 MB, and a
// few thousand more make the statement that reads them fail (out of memory,
// SQLSTATE 54000). So a number may grow by at most MaxNumberGrowth characters
// from what was sent to what PostgreSQL writes out, and the numbers of one
// text by at most MaxTextGrowth in all: a text reads back at most 1 MiB
// longer than it was sent.
const (
	// MaxNumberGrowth is how many characters more than as sent a number may
	// take written out: every float64 takes at most about 330 (1e308 is 309
	// digits, 5e-324 is 326 characters), and a number written without an
	// exponent takes no more than as sent.
	MaxNumberGrowth = 1000
	// MaxTextGrowth is how many characters the numbers of one JSON text may
	// add to it in all when written out, 1 MiB: the default
	// http.max_body_bytes, so a request reads back at most about twice as
	// large as the largest one the router takes by default; numbers of
	// ordinary data grow by a few characters each (1.5e-7 is 0.00000015).
	MaxTextGrowth = 1 << 20
)

// NumberError names a number in a JSON text that PostgreSQL's jsonb cannot
// hold, or that it would write out too long, where it is and why.
type NumberError struct {
	Offset int    // byte offset of the number in the text
	Path   string // its member: "input.amount", "messages[0].content"; "" for the text itself
	Number string // how it starts, as written (a long number is cut)
	Reason string // what is beyond numeric's range, or how long it is written out, in words
	// Long is set for a number within numeric's range that PostgreSQL would
	// write out too long (MaxNumberGrowth, MaxTextGrowth); Reason then says
	// how long.
	Long bool
}

func (e *NumberError) Error() string {
	at := fmt.Sprintf("at offset %d", e.Offset)
	if e.Path != "" {
		at = fmt.Sprintf("at %s (offset %d)", e.Path, e.Offset)
	}
	if e.Long {
		return fmt.Sprintf("the number %s %s %s: the router stores JSON numbers as PostgreSQL's numeric, which writes a number out "+
			"in full, without an exponent, whenever it is read (1e1000 is 1001 characters); a number may take at most %d characters "+
			"more written out than as sent (every float64 fits), and the numbers of one JSON document at most %d (1 MiB) more in all",
			e.Number, at, e.Reason, MaxNumberGrowth, MaxTextGrowth)
	}
	return fmt.Sprintf("the number %s %s has %s: the router stores JSON numbers as PostgreSQL's numeric, "+
		"which holds at most %d digits before the decimal point and %d after it, counting the exponent", e.Number, at, e.Reason, MaxIntDigits, MaxFracDigits)
}

// CheckNumbers returns the first number in JSON text b that PostgreSQL's
// jsonb cannot hold, or that takes more than MaxNumberGrowth characters
// written out than as sent, or that brings what the text's numbers take
// written out beyond what they take as sent by more than MaxTextGrowth; nil
// when there is none. Text that is not JSON gets no error it would not get as
// JSON; strings are not numbers.
//
// It is cheap on the hot path: it reads the text eight bytes at a time and
// skips those without a digit; it reads as a number only a digit followed by
// an e (only a number with an exponent takes more characters written out
// than as sent) and a run of 8176 digits or more (without an exponent, only a
// run of minLongRun digits can be out of range). Only a number that is out of
// range or too long (or text inside a string that reads like one), or
// numbers that grow by more than MaxTextGrowth together, make it walk the
// whole text to tell a number from a string and name the member.
func CheckNumbers(b []byte) *NumberError {
	var grown int64 // what the numbers read grow by written out
	words := 0      // words in a row that are all digits
	for i := 0; i < len(b); {
		at := i // a position inside the number to read
		if i+9 <= len(b) {
			d := digitBytes(binary.LittleEndian.Uint64(b[i:]))
			if d == 0 {
				words = 0
				i += 8
				continue
			}
			// The digits of b[i:i+8] followed by an e, each in the same byte
			// of the two words.
			if pair := d & eBytes(binary.LittleEndian.Uint64(b[i+1:])); pair != 0 {
				at += bits.TrailingZeros64(pair) / 8
			} else if d != allBytes {
				words = 0
				i += 8
				continue
			} else if words++; words < longRunWords || !longRun(b, i) {
				i += 8
				continue
			}
		} else if !isDigit(b[i]) || i+1 == len(b) || b[i+1]|0x20 != 'e' { // the last bytes, one at a time
			i++
			continue
		}
		// The whole number around: outside a string, a number is all the
		// number bytes between two others (or the text's ends).
		start, end := at, at+1
		for start > 0 && isNumberByte(b[start-1]) {
			start--
		}
		for end < len(b) && isNumberByte(b[end]) {
			end++
		}
		if n, ok := parseNumber(b[start:end]); ok {
			if n.outOfRange() != "" {
				return scanNumbers(b, false) // a number, or text in a string?
			}
			if g := n.written() - int64(end-start); g > MaxNumberGrowth {
				return scanNumbers(b, false)
			} else if g > 0 {
				if grown += g; grown > MaxTextGrowth {
					return scanNumbers(b, false)
				}
			}
		}
		i, words = end, 0
	}
	return nil
}

// longRunWords is how many words in a row of all digits a run of minLongRun
// digits holds at least, the last bytes (read one at a time) left out.
const longRunWords = (minLongRun - 16) / 8

// longRun reports whether the digit at b[i] is in a run of minLongRun
// digits or more.
func longRun(b []byte, i int) bool {
	start, end := i, i+1
	for start > 0 && isDigit(b[start-1]) {
		start--
	}
	for end < len(b) && isDigit(b[end]) {
		end++
	}
	return end-start >= minLongRun
}

// CheckNumericRange is CheckNumbers without the limits on how long a number
// is written out: the first number in b beyond numeric's range, which is what
// PostgreSQL itself refuses. It walks the whole text; CheckNumbers is the
// check for requests and outputs.
func CheckNumericRange(b []byte) *NumberError { return scanNumbers(b, true) }

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

// scanNumbers walks JSON text b token by token and returns its first number
// that is out of range or, unless rangeOnly, too long written out (see
// CheckNumbers), with the member that holds it. Text that is not JSON is
// walked as well as it goes, without failing.
func scanNumbers(b []byte, rangeOnly bool) *NumberError {
	type level struct {
		object bool
		key    []byte // an object's current member, quoted as written
		index  int    // an array's current element
	}
	var stack []level
	wantKey := false // the next string is an object's member name
	var grown int64
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
			n, ok := parseNumber(b[i:end])
			var reason string
			long := false
			if ok {
				reason = n.outOfRange()
				if reason == "" && !rangeOnly {
					w := n.written()
					if g := w - int64(end-i); g > MaxNumberGrowth {
						reason, long = fmt.Sprintf("is written out in %d characters, %d more than as sent", w, g), true
					} else if g > 0 {
						if grown += g; grown > MaxTextGrowth {
							reason, long = fmt.Sprintf("brings what the numbers up to it take written out beyond what they take as sent to %d characters", grown), true
						}
					}
				}
			}
			if reason != "" {
				var path strings.Builder
				for _, l := range stack {
					if l.object {
						writeMember(&path, l.key)
					} else {
						path.WriteString("[" + strconv.Itoa(l.index) + "]")
					}
				}
				return &NumberError{Offset: i, Path: path.String(), Number: cut(b[i:end]), Reason: reason, Long: long}
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
