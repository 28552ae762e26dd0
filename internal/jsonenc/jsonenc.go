// Package jsonenc owns append-style JSON encoding that writes what
// encoding/json writes, byte for byte, without reflection: a string (escaped
// as encoding/json escapes it by default, HTML-safe), a float (encoding/json's
// float encoder), and raw JSON (compacted and escaped as encoding/json does
// for a json.RawMessage, without validating it again). The router's
// hand-written encoders of hot-path documents (the store's job, the OpenAI
// adapter's request body) are built from these, and each has a test that
// compares its output with encoding/json's byte for byte.
//
// It has no dependencies on the rest of the router.
package jsonenc

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendFloat writes f as encoding/json writes a float64 (bits 64) or a
// float32 (bits 32, f converted from it): like ES6's number to string, 'f'
// unless the magnitude is below 1e-6 or at least 1e21, and an exponent without
// a leading zero. NaN and infinities, which encoding/json refuses, are null.
func AppendFloat(b []byte, f float64, bits int) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// AppendRaw appends raw JSON as encoding/json does for a json.RawMessage:
// compacted (jsonb writes a space after every ':' and ','), and with <, >, &,
// U+2028 and U+2029 escaped (encoding/json does that even inside raw JSON). It
// does not validate: the caller knows raw is JSON (jsonb from PostgreSQL, JSON
// the router wrote with encoding/json or checked with json.Valid). Nil or
// empty is null.
func AppendRaw(b []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	start, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !rawSpecial[c] {
			continue
		}
		switch c {
		case '"':
			inString = !inString
		case '\\':
			i++ // the escaped character (ASCII) is not the string's end
		case ' ', '\t', '\n', '\r':
			if !inString {
				b = append(b, raw[start:i]...)
				start = i + 1
			}
		case 0xE2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8 {
				b = append(b, raw[start:i]...)
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
		default: // <, >, &
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		}
	}
	return append(b, raw[start:]...)
}

// rawSpecial marks the bytes AppendRaw looks at: string quotes and
// escapes, whitespace, <, >, & and the first byte of U+2028 and U+2029.
var rawSpecial = [256]bool{'"': true, '\\': true, ' ': true, '\t': true, '\n': true, '\r': true,
	'<': true, '>': true, '&': true, 0xE2: true}

const hexDigits = "0123456789abcdef"

// AppendString is appendString from Go's encoding/json/encode.go with
// escapeHTML set (Copyright 2010 The Go Authors; BSD-style licence, in Go's
// LICENSE file): control characters, ", \, <, > and & escaped, invalid UTF-8
// as \ufffd, U+2028 and U+2029 escaped.
func AppendString(dst []byte, src string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				// This encodes bytes < 0x20 except for \b, \f, \n, \r and \t,
				// and <, > and &.
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 is LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR: valid in
		// JSON strings, but not in JavaScript (JSONP), so escaped.
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}

// htmlSafe is encoding/json's htmlSafeSet: the ASCII bytes that need no escape
// in a string, which are all but the control characters, ", \, <, > and &.
var htmlSafe = func() (s [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		s[c] = true
	}
	for _, c := range `"\<>&` {
		s[c] = false
	}
	return s
}()
