package api_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
)

// keyLookups counts the stored-key lookups among the statements seen.
func keyLookups(st *statements) int {
	n := 0
	for _, q := range st.since(0) {
		if strings.Contains(q, "FROM api_keys") {
			n++
		}
	}
	return n
}

// A key that is no configured key and not of a stored key's shape ("rk_" and
// 26 base32 characters: `router keys create`) is refused as an unknown key
// without asking the database: random keys cost no query each. A key of
// that shape is still looked up, and a stored key works.
func TestMalformedKeyIsRefusedWithoutAQuery(t *testing.T) {
	st := &statements{}
	b := setup(t, options{tracer: st})
	unknown := func(key string) reply {
		t.Helper()
		r := b.do(t, http.MethodGet, "/v1/jobs", key, "")
		if ty, _ := r.body["type"].(string); r.status != http.StatusUnauthorized || r.body["title"] != "Unknown API key" ||
			!strings.HasSuffix(ty, "unauthenticated") || !strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("key %q: status %d %s, want the 401 of an unknown key", key, r.status, r.raw)
		}
		return r
	}
	for _, key := range []string{
		"wrong-key",
		"rk_" + strings.ToLower(rand.Text()), // base32 is upper case
		"rk_" + rand.Text()[:25],             // one character short
		"rk_" + rand.Text()[:25] + "8",       // 8 is not base32
		"rk_" + rand.Text() + "-",
		"RK_" + rand.Text(),
		"sk-" + rand.Text(),
		rand.Text() + rand.Text(),
		"rk_" + strings.Repeat("A", 65),
	} {
		unknown(key)
	}
	if n := keyLookups(st); n != 0 {
		t.Fatalf("%d stored-key lookups for keys no stored key can be", n)
	}
	unknown("rk_" + rand.Text()) // a stored key's shape: looked up
	if n := keyLookups(st); n != 1 {
		t.Fatalf("%d stored-key lookups for an unknown key of a stored key's shape, want 1", n)
	}
	key, err := b.db.Store.CreateAPIKey(context.Background(), "initech")
	if err != nil {
		t.Fatal(err)
	}
	if r := b.do(t, http.MethodGet, "/v1/jobs", key, ""); r.status != http.StatusOK {
		t.Fatalf("a stored key (%s…): status %d %s", key[:7], r.status, r.raw)
	}
}
