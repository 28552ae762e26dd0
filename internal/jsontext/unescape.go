package jsontext

import (
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnescaped appends to dst the text of s, the contents of a JSON
// string between its quotes (valid JSON), as encoding/json decodes it: a
// lone surrogate escape is U+FFFD. It allocates nothing beyond dst's growth.
func AppendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			dst = append(dst, s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				dst = append(dst, '\\', 'u')
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if lo, ok := hex4(s, i+3); ok && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // " \ /
			dst = append(dst, c)
		}
	}
	return dst
}
