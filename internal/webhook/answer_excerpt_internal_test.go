package webhook

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A non-2xx answer's body is quoted in the try's error as at most 256 bytes
// of one line of valid UTF-8.
func TestAnswerExcerptIsOneLineOfValidUTF8(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"empty", "", ""},
		{"only spaces and controls", " \r\n\t\x00\x1b ", ""},
		{"short", "  bad\tsignature\n", "bad signature"},
		{"C1 control and DEL", "a\u0085b\x7fc", "a b c"},
		{"bidirectional override", "evil\u202egnp.exe", "evil gnp.exe"},
		{"malformed bytes", "a\xff\xfeb", "a\uFFFD\uFFFDb"},
		{"exactly the limit", strings.Repeat("a", 256), strings.Repeat("a", 256)},
		{"over the limit", strings.Repeat("a", 300), strings.Repeat("a", 256) + "…"},
		{"a character cut by the limit", strings.Repeat("a", 255) + "é and more", strings.Repeat("a", 255) + "…"},
		{"a 4-byte character cut by the limit", strings.Repeat("a", 254) + "😀", strings.Repeat("a", 254) + "…"},
		{"a 4-byte character ending at the limit", strings.Repeat("a", 252) + "😀!", strings.Repeat("a", 252) + "😀…"},
	} {
		b := []byte(c.body)
		if len(b) > answerExcerptBytes+1 { // send reads one byte past the limit
			b = b[:answerExcerptBytes+1]
		}
		got := answerExcerpt(b)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if !utf8.ValidString(got) || len(strings.TrimSuffix(got, "…")) > answerExcerptBytes {
			t.Errorf("%s: %q is not valid UTF-8 within %d bytes", c.name, got, answerExcerptBytes)
		}
	}
}
