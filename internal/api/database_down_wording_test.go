package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// The 503 of a database that does not answer says when to retry, and with a
// key that retrying with it duplicates nothing, in one sentence: not
// "…retry with the same Idempotency-Key: nothing is duplicated shortly".
// Found by review.
func TestDatabaseDownSaysRetryShortly(t *testing.T) {
	srv := databaseDownServer(t, slog.New(slog.DiscardHandler))
	for _, c := range []struct{ method, body, key, want string }{
		{method: "POST", body: triageBody("down"), key: "down-words", want: "; retry shortly with the same Idempotency-Key: nothing is duplicated"},
		{method: "GET", want: "; retry the request shortly"},
	} {
		req, err := http.NewRequest(c.method, srv.URL+"/v1/jobs", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+acmeKey)
		if c.key != "" {
			req.Header.Set("Idempotency-Key", c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var p struct {
			Detail string `json:"detail"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("%d %s: %v", resp.StatusCode, raw, err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(p.Detail, "the router could not reach its database to ") ||
			!strings.HasSuffix(p.Detail, c.want) {
			t.Errorf("%s /v1/jobs, Idempotency-Key %q: %d detail %q; want 503 \"the router could not reach its database to …%s\"", c.method, c.key, resp.StatusCode, p.Detail, c.want)
		}
	}
}
