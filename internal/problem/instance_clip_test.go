package problem

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// A defaulted instance is the request's path cut short when JSON would write
// it in more than InstanceBytes, at a character's start, with "…": a path is
// the caller's, as long as the request line (found by review: 20000 bytes
// that are not UTF-8, %FF, made a 160 KB answer; JSON writes each as
// \ufffd).
func TestWriteClipsLongInstance(t *testing.T) {
	for _, c := range []struct {
		name, path string
		whole      bool
	}{
		{"short", "/v1/jobs/" + strings.Repeat("a", InstanceBytes-len("/v1/jobs/")), true},
		{"ascii", "/v1/jobs/" + strings.Repeat("a", 60000), false},
		{"not UTF-8", "/v1/jobs/" + strings.Repeat("%FF", 20000), false},
		{"multibyte", "/v1/jobs/" + strings.Repeat("%C3%A9", 5000), false},
		{"escaped by JSON", "/v1/jobs/" + strings.Repeat("%3C%22", 5000), false},
	} {
		w, body := write(t, c.path, Details{Status: 404})
		instance, _ := body["instance"].(string)
		path := asJSONReads(httptest.NewRequest("GET", c.path, nil).URL.Path)
		if c.whole {
			if instance != path {
				t.Errorf("%s: instance %q, want the whole path", c.name, instance)
			}
			continue
		}
		if !strings.HasSuffix(instance, "…") || !strings.HasPrefix(path, strings.TrimSuffix(instance, "…")) {
			t.Errorf("%s: instance %q, want the path's start with …", c.name, instance)
		}
		if n := w.Body.Len(); n > InstanceBytes+512 {
			t.Errorf("%s: answer of %d bytes, want at most %d", c.name, n, InstanceBytes+512)
		}
	}
}

// asJSONReads is s as a JSON decoder reads it back: each byte that is not
// UTF-8 is U+FFFD.
func asJSONReads(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += size
	}
	return b.String()
}
