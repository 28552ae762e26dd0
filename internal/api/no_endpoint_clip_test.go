package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/problem"
)

// A 404 or 405 of the tenant API quotes the caller's method and path in its
// detail. They are the caller's, up to the listener's header limit (64 KiB;
// net/http's ~1 MiB here), and a byte that is not UTF-8 (%FF) is written by
// JSON as six ("\ufffd"): quoted whole, a 60 KB request line was a 60 KB
// answer, to anyone, before authentication. The detail quotes at most
// problem.Clip's 64 bytes of each, as the instance is clipped. Found by
// review.
func TestNoEndpointAnswersClipCallerText(t *testing.T) {
	b := setup(t, options{})
	const most = problem.InstanceBytes + 1024 // the clipped instance, the detail's own words, clipped quotes
	for _, c := range []struct {
		name, method, path string
		status             int
	}{
		{"404 path", http.MethodGet, "/v1/" + strings.Repeat("%FF", 20000), http.StatusNotFound},
		{"405 method", strings.Repeat("X", 60000), "/v1/jobs", http.StatusMethodNotAllowed},
		{"405 path", http.MethodPut, "/v1/jobs/" + strings.Repeat("%FF", 20000), http.StatusMethodNotAllowed},
		// A near miss of an OpenAI endpoint is answered in OpenAI's shape,
		// and its "did you mean" quotes the path too.
		{"near miss", http.MethodGet, "/models/" + strings.Repeat("%FF", 20000), http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := b.do(t, c.method, c.path, acmeKey, "")
			if r.status != c.status {
				t.Fatalf("%d %.300s, want %d", r.status, r.raw, c.status)
			}
			if len(r.raw) > most {
				t.Errorf("a %d answer of %d bytes, quoting the caller's text whole; want at most %d", r.status, len(r.raw), most)
			}
		})
	}
}
