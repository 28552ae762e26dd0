package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A bearer token longer than any key the router accepts is refused as an
// unknown key without being looked up or cached; a configured key longer
// than that bound still authenticates.
func TestLongBearerTokenNotCached(t *testing.T) {
	long := strings.Repeat("k", 600)
	cache := NewCachedAuth(&KeyAuth{Static: map[string]string{"short-key": "acme"}}, time.Minute)
	s := New(Config{}, Deps{Auth: cache})
	h := s.withOwner(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, openAIAuthFail)
	call := func(key string) int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		h(w, r)
		return w.Code
	}
	entries := func() int { cache.mu.Lock(); defer cache.mu.Unlock(); return len(cache.m) }

	if code := call(strings.Repeat("x", maxBearerBytes+1)); code != http.StatusUnauthorized || entries() != 0 {
		t.Fatalf("a %d-byte token: status %d, %d cache entries; want 401 and none", maxBearerBytes+1, code, entries())
	}
	if code := call(strings.Repeat("x", maxBearerBytes)); code != http.StatusUnauthorized || entries() != 1 {
		t.Fatalf("a %d-byte token: status %d, %d cache entries; want 401, looked up and cached", maxBearerBytes, code, entries())
	}

	cache = NewCachedAuth(&KeyAuth{Static: map[string]string{long: "acme"}}, time.Minute)
	s = New(Config{}, Deps{Auth: cache})
	h = s.withOwner(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, openAIAuthFail)
	if code := call(long); code != http.StatusNoContent {
		t.Fatalf("a configured %d-byte key: status %d, want it accepted", len(long), code)
	}
	if code := call(long + "x"); code != http.StatusUnauthorized || entries() != 1 {
		t.Fatalf("a token longer than the longest configured key: status %d, %d cache entries; want 401, only the key cached", code, entries())
	}
}
