package webhook

import (
	"net/url"
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
		got := answerExcerpt(b, false)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if !utf8.ValidString(got) || len(strings.TrimSuffix(got, "…")) > answerExcerptBytes {
			t.Errorf("%s: %q is not valid UTF-8 within %d bytes", c.name, got, answerExcerptBytes)
		}
	}
}

// An answer whose excerpt the limit cuts partway into the webhook URL's
// secret path hides the part it has of it; one the limit does not reach
// hides the whole path, and a text quoting nothing of the URL is the
// excerpt as it was.
func TestAnswerTextHidesTheWebhookPathTheLimitCuts(t *testing.T) {
	u, err := url.Parse("https://hooks.slack.com/services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE")
	if err != nil {
		t.Fatal(err)
	}
	quote := "Cannot POST /services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE and more"
	for pad := answerExcerptBytes - len(quote); pad <= answerExcerptBytes-len("Cannot POST /services/T"); pad++ {
		b := []byte(strings.Repeat("x", pad) + " " + quote)
		if len(b) > answerExcerptBytes+1 {
			b = b[:answerExcerptBytes+1]
		}
		got := answerText(b, false, u)
		if strings.Contains(got, "T024") || strings.Contains(got, "B07R") || strings.Contains(got, "m2zX") {
			t.Errorf("padded %d: %q shows the secret path", pad, got)
		}
		if !strings.Contains(got, "/services/…") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
			t.Errorf("padded %d: %q, want the path shown as /services/… and the cut marked", pad, got)
		}
	}
	b := []byte(strings.Repeat("a", 300))
	if got, want := answerText(b[:answerExcerptBytes+1], false, u), strings.Repeat("a", 256)+"…"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
