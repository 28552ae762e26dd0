package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// GET /v1/models/{model} quoted the caller's model name whole in its 404:
// a 60 KB path (anything under http.max_header_bytes) made a 60 KB answer.
// Every other answer that quotes what a caller sent clips it
// (rfcproblem.Clip: 64 bytes), the chat endpoint's own model_not_found
// included ("The caller's model, quoted clipped").
func TestGetModelQuotesNameClipped(t *testing.T) {
	s := New(Config{}, Deps{
		Auth:   &KeyAuth{Static: map[string]string{"acme-key-0123456789": "acme"}},
		Routes: map[string]bool{"default": true},
	})
	name := strings.Repeat("m", 60000)
	r := httptest.NewRequest(http.MethodGet, "/v1/models/"+name, nil)
	r.Header.Set("Authorization", "Bearer acme-key-0123456789")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusNotFound {
		t.Fatalf("status %d, want 404", w.Code)
	}
	if n := w.Body.Len(); n > 2048 {
		t.Errorf("the 404 for a %d-byte model name is %d bytes; want the name quoted clipped, as chat's model_not_found does (%.120s…)",
			len(name), n, w.Body.String())
	}
}
