package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// tenantSchema is a caller's response_format schema of n properties; tag
// makes it differ from every other.
func tenantSchema(tag string, n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"%s_field_%d":{"type":"string","description":"the %s thing number %d","enum":["a%d","b%d","c%d"]}`, tag, i, tag, i, i, i, i)
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"additionalProperties":false}`
}

// mallocs is how many heap objects f allocates (it runs f once).
func mallocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// A tenant's compiled response_format schema must not answer another
// tenant's request: a cache shared by every owner lets one tenant time its
// own requests to learn whether another recently sent a given schema (a
// schema costs from a millisecond to about a second of CPU to compile, a
// cache hit nothing) — the oracle docs/prompts.md §4 says the token-count
// cache was made per owner to close. Measured without a clock: the work of
// owner globex's first request with acme's schema is compared, in heap
// allocations, with that of its first request with a schema nobody sent.
// (rauth5 finding 1's proof test.)
func TestSchemaCompileIsNotSharedAcrossOwners(t *testing.T) {
	s := New(Config{RequireChatKey: true}, Deps{
		Auth:   &KeyAuth{Static: map[string]string{"acme-key-0123456789": "acme", "globex-key-0123456789": "globex"}},
		Routes: map[string]bool{"default": true},
	})
	send := func(key, schema string) int {
		body := `{"model":"default","messages":[{"role":"user","content":"Reply in JSON."}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":` + schema + `}}}`
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r) // no Idempotency-Key: refused 400 once the schema is compiled, nothing stored
		return w.Code
	}
	// Warm every path but the schema's compile.
	if code := send("globex-key-0123456789", tenantSchema("warm", 40)); code != http.StatusBadRequest {
		t.Fatalf("warm-up: status %d, want 400 (no Idempotency-Key)", code)
	}
	acmes := tenantSchema("acme-secret-catalog", 40)
	if code := send("acme-key-0123456789", acmes); code != http.StatusBadRequest {
		t.Fatalf("acme: status %d, want 400", code)
	}
	fresh := mallocs(func() { send("globex-key-0123456789", tenantSchema("nobody-sent-this", 40)) })
	probe := mallocs(func() { send("globex-key-0123456789", acmes) })
	again := mallocs(func() { send("acme-key-0123456789", acmes) })
	t.Logf("globex's first request: a schema nobody sent %d allocations, acme's schema %d; acme's second request %d", fresh, probe, again)
	if again*2 >= fresh {
		t.Errorf("acme's second request with its own schema did %d allocations, a first compile %d: an owner's own schema should stay compiled", again, fresh)
	}
	if probe*2 < fresh {
		t.Errorf("globex's first request with acme's schema did %d allocations, a schema nobody sent %d: acme's compile "+
			"answered globex's request, so globex can tell (by timing its request) that another tenant sent this schema", probe, fresh)
	}
}
