// Package jsontext owns one question about JSON text: can PostgreSQL store it?
// jsonb refuses bytes that are not UTF-8, the escape \u0000 and UTF-16
// surrogate escapes without their pair, all of which encoding/json accepts.
// Check finds them (to refuse a caller's body or a provider's output);
// Sanitize replaces them (for the router's own records of what happened).
// jsonb also refuses numbers beyond its numeric type (1e400000), which
// encoding/json accepts too, and writes a number it holds out in full
// without an exponent (1e131000 reads back as 131001 characters):
// CheckNumbers finds both, the second beyond MaxNumberGrowth and
// MaxTextGrowth. One more property of a text makes it mean different things
// to different readers: an object naming a key twice; DuplicateKey finds it.
//
// It has no dependencies on the rest of the router.
package jsontext

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Error names the first place in a JSON text that PostgreSQL's jsonb
// (or any UTF-8 store) refuses.
type Error struct {
	Offset int    // byte offset in the text
	Reason string // what is there, in words
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at offset %d", e.Reason, e.Offset)
}

// Check reports the first thing in JSON text b that cannot be stored
// as jsonb: bytes that are not UTF-8, the escape \u0000 (NUL), or a UTF-16
// surrogate escape without its pair. Malformed escapes are left to a JSON
// parser to report. It returns nil for storable text.
func Check(b []byte) *Error {
	if !utf8.Valid(b) {
		at := 0
		for at < len(b) {
			r, n := utf8.DecodeRune(b[at:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			at += n
		}
		return &Error{Offset: at, Reason: fmt.Sprintf("byte 0x%02x that is not UTF-8", b[at])}
	}
	// A backslash only appears inside JSON strings.
	for i := 0; i+1 < len(b); {
		if b[i] != '\\' {
			i++
			continue
		}
		if b[i+1] != 'u' {
			i += 2
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return nil
		}
		switch {
		case r == 0:
			return &Error{Offset: i, Reason: `the escape \u0000 (NUL), which cannot be stored`}
		case r >= 0xDC00 && r <= 0xDFFF:
			return &Error{Offset: i, Reason: fmt.Sprintf(`the escape \u%04x, a lone UTF-16 low surrogate (not a character)`, r)}
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := rune(0), i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u'
			if ok {
				lo, ok = hex4(b, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return &Error{Offset: i, Reason: fmt.Sprintf(`the escape \u%04x, a UTF-16 high surrogate without its low surrogate (not a character)`, r)}
			}
			i += 12
			continue
		}
		i += 6
	}
	return nil
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Sanitize returns b with every unstorable part replaced by U+FFFD (the
// replacement character): bytes that are not UTF-8, \u0000 and lone surrogate
// escapes. Storable text is returned as is. For records the router writes
// about a provider's behaviour (error messages, violations), where losing a
// NUL is better than losing the record.
func Sanitize(b []byte) []byte {
	if Check(b) == nil {
		return b
	}
	b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			i++
			continue
		}
		if b[i+1] != 'u' {
			out = append(out, b[i], b[i+1])
			i += 2
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			out = append(out, b[i:]...)
			break
		}
		switch {
		case r == 0, r >= 0xDC00 && r <= 0xDFFF:
			out = append(out, `\ufffd`...)
			i += 6
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(b, i+8); ok && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
				out = append(out, b[i:i+12]...)
				i += 12
			} else {
				out = append(out, `\ufffd`...)
				i += 6
			}
		default:
			out = append(out, b[i:i+6]...)
			i += 6
		}
	}
	return out
}

// SanitizeString is Sanitize for a plain (not JSON) string bound for a text
// column: invalid UTF-8 and NUL become U+FFFD.
func SanitizeString(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
