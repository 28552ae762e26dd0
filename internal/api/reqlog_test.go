package api_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// The error and warning lines that say why a request failed carry its
// request_id (the one its answer and access line carry), so an operator handed
// a request id by a tenant finds the cause; they carried none (the chat
// endpoint's not even the path). Found by review.
func TestErrorLinesCarryTheRequestID(t *testing.T) {
	logs := &lockedBuffer{}
	srv := databaseDownServer(t, slog.New(slog.NewTextHandler(logs, nil)))
	for i, c := range []struct{ method, path, body, bearer string }{
		{method: "GET", path: "/v1/jobs/01a23a8b-4bc3-703d-8f7b-767a6c3352f4"},
		{method: "GET", path: "/v1/jobs"},
		{method: "POST", path: "/v1/chat/completions", body: `{"model":"default","messages":[{"role":"user","content":"hi"}]}`},
		{method: "GET", path: "/v1/jobs", bearer: "rk_ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	} {
		rid := fmt.Sprintf("reqlog-%d", i)
		before := len(logs.String())
		req, err := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		bearer := c.bearer
		if bearer == "" {
			bearer = acmeKey
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("X-Request-Id", rid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %s with the database down: %d, want 503", c.method, c.path, resp.StatusCode)
		}
		var failures int
		for _, line := range strings.Split(logs.String()[before:], "\n") {
			if !strings.Contains(line, "level=ERROR") && !strings.Contains(line, "level=WARN") {
				continue
			}
			failures++
			if !strings.Contains(line, "request_id="+rid) || !strings.Contains(line, "path=") {
				t.Errorf("%s %s: a line about the failure without the request's request_id or path: %s", c.method, c.path, line)
			}
		}
		if failures == 0 {
			t.Errorf("%s %s: no error line about the failure", c.method, c.path)
		}
	}
}
