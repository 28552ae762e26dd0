package api_test

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// While the database does not answer, every endpoint says so as the API
// key's check does: 503 unavailable with Retry-After, which clients retry —
// not a 500 "Internal error" that reads as the router's bug. And only a
// request that has an Idempotency-Key is told to retry with it. Found by
// review (docs/api.md, Statuses).
func TestDatabaseDownIsA503OnEveryEndpoint(t *testing.T) {
	srv := databaseDownServer(t, slog.New(slog.DiscardHandler))
	id := "01a23a8b-4bc3-703d-8f7b-767a6c3352f4"
	for _, c := range []struct {
		method, path, body, key string
		openAI                  bool
		bearer                  string // a stored key's shape: its check needs the database
	}{
		{method: "GET", path: "/v1/jobs/" + id},
		{method: "GET", path: "/v1/jobs"},
		{method: "GET", path: "/v1/jobs/" + id + "/events"},
		{method: "POST", path: "/v1/jobs/" + id + "/cancel"},
		{method: "POST", path: "/v1/jobs/" + id + "/retry"},
		{method: "POST", path: "/v1/jobs/" + id + "/attempts/1/resolve", body: `{"outcome":"failed"}`},
		{method: "POST", path: "/v1/jobs", body: triageBody("down"), key: "down-1"},
		{method: "POST", path: "/v1/chat/completions", body: `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
			key: "down-2", openAI: true},
		{method: "GET", path: "/v1/jobs", bearer: "rk_ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
		{method: "POST", path: "/v1/chat/completions", body: `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
			openAI: true, bearer: "rk_ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	} {
		req, err := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+cmp.Or(c.bearer, acmeKey))
		if c.key != "" {
			req.Header.Set("Idempotency-Key", c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(raw)
		what := c.method + " " + c.path + " with the database down"
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d Retry-After=%q %s; want 503 with Retry-After", what, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		wantType := `/unavailable"`
		if c.openAI {
			wantType = `"code":"unavailable"`
		}
		if !strings.Contains(body, wantType) || !strings.Contains(body, "could not reach its database") {
			t.Errorf("%s: %s; want the unavailable problem saying the database could not be reached", what, body)
		}
		if mentions := strings.Contains(body, "Idempotency-Key"); mentions != (c.key != "") {
			t.Errorf("%s: %s; mentions the Idempotency-Key: %v, the request has one: %v", what, body, mentions, c.key != "")
		}
	}
}

// databaseDownServer is the tenant API over a database that does not answer
// (nothing listens on its port), logging to log.
func databaseDownServer(t *testing.T, log *slog.Logger) *httptest.Server {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:1/router?sslmode=disable&connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(pool, store.Options{})
	srv := httptest.NewServer(api.New(api.Config{Limits: api.Limits{MaxLiveJobs: 10}}, api.Deps{
		Store: st, Prompts: prompts, Routes: map[string]bool{"default": true}, Log: log,
		Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}, Store: st},
	}))
	t.Cleanup(srv.Close)
	return srv
}
