package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// postRevokedMidBody sends a POST to path on addr with key, its body held
// back until the key has been checked, revokes the key while the body is
// still on its way, and returns the answer once the rest has arrived. The
// signal that the key was checked is the server's 100 Continue: the request
// says Expect: 100-continue, and net/http sends it when the body is first
// read, which happens only once the key is valid and its owner's rate token
// taken (withOwner). revoke runs after the first bytes of the body are sent.
func postRevokedMidBody(t *testing.T, addr, path, key, body string, revoke func()) (status int, answer map[string]any) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard against a hang, not a timing assertion
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nIdempotency-Key: revoked-mid-body\r\n"+
		"Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", path, key, len(body))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusContinue {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("answered %d %s before the body was read; want 100 Continue", resp.StatusCode, raw)
	}
	if _, err := io.WriteString(conn, body[:10]); err != nil {
		t.Fatal(err)
	}
	revoke()
	if _, err := io.WriteString(conn, body[10:]); err != nil {
		t.Fatal(err)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &answer)
	return resp.StatusCode, answer
}

// A request whose API key is revoked while its body is still arriving
// creates nothing: the key, valid when the headers came, is checked again
// once the body has been read (SPEC §16: a revoked key is refused from the
// next request on; `router keys revoke` says every replica refuses it once it
// returns). Before, the key was looked up only before the body was read, and
// the request created its job after the revocation. The chat endpoint, which
// goes through the same check, answers in OpenAI's shape.
func TestKeyRevokedWhileBodyArrivesCreatesNothing(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	addr := strings.TrimPrefix(b.srv.URL, "http://")
	cases := []struct {
		name, path, owner, body string
		refused                 func(answer map[string]any) bool
	}{
		{"job", "/v1/jobs", "acme-jobs", triageBody("Revoked"), func(a map[string]any) bool {
			d, _ := a["detail"].(string)
			return a["title"] == "API key revoked" && strings.Contains(d, "revoked while this request's body was arriving")
		}},
		{"chat completion", "/v1/chat/completions", "acme-chat",
			`{"model":"default","messages":[{"role":"user","content":"Revoked while sending"}]}`, func(a map[string]any) bool {
				e, _ := a["error"].(map[string]any)
				m, _ := e["message"].(string)
				return e["code"] == "invalid_api_key" && strings.Contains(m, "revoked while this request's body was arriving")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := b.db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: tc.owner})
			if err != nil {
				t.Fatal(err)
			}
			status, answer := postRevokedMidBody(t, addr, tc.path, k.Key, tc.body, func() {
				if err := b.db.Store.RevokeAPIKey(ctx, k.ID); err != nil {
					t.Fatal(err)
				}
				if r := b.do(t, "GET", "/v1/models", k.Key, ""); r.status != http.StatusUnauthorized {
					t.Fatalf("a new request after the revocation: %d, want 401", r.status)
				}
			})
			n := b.count(t, `SELECT count(*) FROM jobs WHERE owner = $1`, tc.owner)
			if status != http.StatusUnauthorized || !tc.refused(answer) || n != 0 {
				t.Fatalf("answered %d %v and %d job(s) created after the revocation; want 401 saying the key was revoked, and none", status, answer, n)
			}
		})
	}
	// A key still valid once the body has come is let through as before.
	k, err := b.db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme-kept"})
	if err != nil {
		t.Fatal(err)
	}
	status, answer := postRevokedMidBody(t, addr, "/v1/jobs", k.Key, triageBody("Kept"), func() {})
	if status >= 400 || b.count(t, `SELECT count(*) FROM jobs WHERE owner = 'acme-kept'`) != 1 {
		t.Fatalf("a valid key: answered %d %v; want its job created", status, answer)
	}
}
