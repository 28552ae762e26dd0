package ops_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The problem writer clips the request's path in `instance` to
// problem.InstanceBytes, and the tenant API quotes at most 64 bytes of a
// caller's value in a detail (problem.Clip): a request line is the caller's,
// up to net/http's ~1 MiB header limit, and a byte that is not UTF-8 (%FF)
// is written by JSON as six ("\ufffd"). The operator listener's own details
// quote the caller's path (404), method (405) and Host (421) whole: a 60 KB
// path, method or Host is a 60 KB answer, and a 421 — answered to anyone who
// reaches a keyless listener, before any other check — quotes a Host of any
// length (up to ~1 MiB). Found by review.
func TestOperatorProblemsClipCallerText(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv := httptest.NewServer(ops.New(ops.Config{}, db.Store, nil, nil)) // no key: a loopback listener
	t.Cleanup(srv.Close)
	long := "/" + strings.Repeat("%FF", 20000)
	const most = problem.InstanceBytes + 1024 // the clipped instance, the detail's own words, a clipped quote
	for _, c := range []struct {
		name, method, path, host string
		status                   int
	}{
		{"404 path", http.MethodGet, long, "", http.StatusNotFound},
		{"405 method", strings.Repeat("X", 60000), "/dashboard", "", http.StatusMethodNotAllowed},
		{"421 host", http.MethodGet, "/dashboard", strings.Repeat("h", 60000) + ".example", http.StatusMisdirectedRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+"/", nil)
			req.URL.Opaque = c.path // sent as is
			if c.path == "/dashboard" {
				req.URL.Opaque = ""
				req.URL.Path = c.path
			}
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("%d %.300s, want %d", resp.StatusCode, body, c.status)
			}
			if len(body) > most {
				t.Errorf("a %d answer of %d bytes, quoting the caller's text whole; want at most %d", resp.StatusCode, len(body), most)
			}
		})
	}
}
