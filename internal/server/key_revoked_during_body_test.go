package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// On the tenant listener `router serve` runs, the body is read after the API
// key is checked (readBodyFirst, up to http.read_body_timeout), before the
// API's endpoint: a key revoked while the body is arriving is checked again
// after that read and refused, and nothing is created. The signal that the
// key was checked is the server's 100 Continue (the request says Expect:
// 100-continue; net/http sends it when readBodyFirst starts reading the
// body, which it does only for a valid key). auth.cache_ttl is 0, so the
// revocation is seen at once (with a cache, once `router keys revoke`
// returns).
func TestRouterRefusesAKeyRevokedWhileItsBodyArrives(t *testing.T) {
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	srv, err := server.New(context.Background(), newConfig(t, db, llm.srv.URL,
		"auth: {cache_ttl: 0s}\nhttp: {read_body_timeout: 1m}\n"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tenant := httptest.NewServer(srv.Handler)
	defer tenant.Close()
	defer close(llm.release) // should a job be created after all, its call ends before the servers close
	ctx := context.Background()
	for _, tc := range []struct{ path, owner, body, refusal string }{
		{"/v1/jobs", "acme-jobs", `{"prompt":"triage","input":{"subject":"Revoked","body":"I cannot log in since yesterday."}}`, `"title":"API key revoked"`},
		{"/v1/chat/completions", "acme-chat", `{"model":"default","messages":[{"role":"user","content":"Revoked while sending"}]}`, `"code":"invalid_api_key"`},
	} {
		k, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: tc.owner})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", tenant.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard against a hang, not a timing assertion
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nIdempotency-Key: revoked-mid-body\r\n"+
			"Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", tc.path, k.Key, len(tc.body))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusContinue {
			raw, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s: answered %d %s before the body was read; want 100 Continue", tc.path, resp.StatusCode, raw)
		}
		if _, err := io.WriteString(conn, tc.body[:10]); err != nil {
			t.Fatal(err)
		}
		if err := db.Store.RevokeAPIKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, tc.body[10:]); err != nil {
			t.Fatal(err)
		}
		resp, err = http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE owner = $1`, tc.owner).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(raw), tc.refusal) ||
			!strings.Contains(string(raw), "revoked while this request's body was arriving") || n != 0 {
			t.Fatalf("%s: answered %d %s and %d job(s) created after the revocation; want 401 saying the key was revoked, and none", tc.path, resp.StatusCode, raw, n)
		}
	}
}
