package api

import (
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// checkEncoding refuses a body whose text the router cannot keep: bytes that
// are not UTF-8 (RFC 8259 §8.1), and the JSON escapes of characters that are
// not characters or that PostgreSQL's jsonb cannot store (\u0000, a lone UTF-16
// surrogate). encoding/json keeps raw fields (a job's input) as sent, which the
// database then refuses; the caller gets a 400 naming the place instead of a 500.
func checkEncoding(body []byte) *problem {
	bad := func(format string, args ...any) *problem {
		return &problem{Status: http.StatusBadRequest, Type: "invalid-encoding", Title: "Body is not valid UTF-8 text",
			Detail: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(body) {
		at := 0
		for at < len(body) {
			r, n := utf8.DecodeRune(body[at:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			at += n
		}
		return bad("the body is not valid UTF-8 (first bad byte 0x%02x at offset %d): send JSON encoded as UTF-8", body[at], at)
	}
	// A backslash only appears inside JSON strings; anything malformed here is
	// left for the JSON decoder to report.
	for i := 0; i+1 < len(body); {
		if body[i] != '\\' {
			i++
			continue
		}
		if body[i+1] != 'u' {
			i += 2
			continue
		}
		r, ok := hex4(body, i+2)
		if !ok {
			return nil
		}
		switch {
		case r == 0:
			return bad(`the body holds the escape \u0000 (NUL) at offset %d, which the router cannot store: remove NUL characters from strings`, i)
		case r >= 0xDC00 && r <= 0xDFFF:
			return bad(`the escape \u%04x at offset %d is a lone UTF-16 low surrogate, not a character: escape a character outside the BMP as a high and low surrogate pair, or send it as UTF-8`, r, i)
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := rune(0), i+12 <= len(body) && body[i+6] == '\\' && body[i+7] == 'u'
			if ok {
				lo, ok = hex4(body, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return bad(`the escape \u%04x at offset %d is a UTF-16 high surrogate without its low surrogate, not a character: escape a character outside the BMP as a surrogate pair, or send it as UTF-8`, r, i)
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
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(v), err == nil
}
