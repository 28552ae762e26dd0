package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// An answer given before any endpoint took the request — a refused API key,
// a path no endpoint takes — closes the connection when the request has a
// body, even one sent whole and short: the API does not read the body of a
// request it has not authenticated, and answers without waiting for net/http
// to read the rest of it (unreadbody.go). A request without a body, or past
// its key check, keeps its connection.
func TestAnswerWithoutReadingBodyClosesConnection(t *testing.T) {
	b := setup(t, options{})
	// An endpoint that takes no key and answers with Write alone (net/http
	// then writes the 200 itself): its answer closes too.
	b.api.Handle("POST /v1/plain", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	cases := []struct {
		name, method, path, key, body string
		status                        int
		close                         bool
	}{
		{"unknown key", "POST", "/v1/jobs", "wrong-key", triageBody("refused"), 401, true},
		{"missing key on chat", "POST", "/v1/chat/completions", "", `{"model":"m1","messages":[]}`, 401, true},
		{"no endpoint", "POST", "/v1/nope", acmeKey, "{}", 404, true},
		{"wrong method", "PUT", "/v1/jobs", acmeKey, "{}", 405, true},
		{"no key taken, Write alone", "POST", "/v1/plain", "", "{}", 200, true},
		{"unknown key, no body", "GET", "/v1/jobs", "wrong-key", "", 401, false},
		{"valid key", "POST", "/v1/jobs", acmeKey, triageBody("kept"), 201, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, b.srv.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.key != "" {
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "unread-body-"+tc.name)
			req.Header.Set("Prefer", "wait=10")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Close != tc.close {
				t.Fatalf("status %d, Connection: close %v (%s); want %d, %v", resp.StatusCode, resp.Close, raw, tc.status, tc.close)
			}
		})
	}
}
