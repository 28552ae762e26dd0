package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A job id as long as the request line is quoted clipped in the 404's detail,
// and the problem's instance (the path) is cut short: the answer stays small
// whatever the caller sends (found by review: 20000 bytes that are not UTF-8,
// %FF, made a 160 KB 404). The 401 of the same path without a key too.
func TestLongJobPathGivesSmallProblem(t *testing.T) {
	b := setup(t, options{})
	path := "/v1/jobs/" + strings.Repeat("%FF", 20000)
	for _, c := range []struct {
		key    string
		status int
	}{{acmeKey, http.StatusNotFound}, {"", http.StatusUnauthorized}} {
		r := b.do(t, "GET", path, c.key, "")
		detail, _ := r.body["detail"].(string)
		if r.status != c.status || len(r.raw) > 8<<10 || len(detail) > 1<<10 {
			t.Errorf("GET of a 60 KB job path (key %q): %d, body %d bytes, detail %d bytes; want %d, at most 8 KiB and 1 KiB",
				c.key, r.status, len(r.raw), len(detail), c.status)
		}
	}
	r := b.do(t, "GET", "/v1/jobs/"+strings.Repeat("x", 100), acmeKey, "")
	if detail, _ := r.body["detail"].(string); !strings.Contains(detail, `"`+strings.Repeat("x", 64)+`…"`) {
		t.Errorf("detail %q does not quote the id's first 64 bytes with …", detail)
	}
}
