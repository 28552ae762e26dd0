package ops_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A filter the database cannot compare (not UTF-8, or with a NUL) is the
// caller's mistake: 400 saying which parameter, not 503 "retry shortly".
func TestConformanceRefusesMalformedFilters(t *testing.T) {
	db := testdb.New(t, store.Options{})
	s := ops.New(ops.Config{Key: opsKey}, db.Store, nil, nil)
	for _, c := range []struct{ query, param string }{
		{"provider=%ff", "provider"},
		{"prompt=tri%00age", "prompt"},
		{"provider=p1&prompt=%c3%28", "prompt"},
	} {
		r := httptest.NewRequest("GET", "/v1/conformance?"+c.query, nil)
		r.Header.Set("Authorization", "Bearer "+opsKey)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		var body map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		detail, _ := body["detail"].(string)
		if w.Code != http.StatusBadRequest || !strings.Contains(detail, c.param) {
			t.Errorf("GET /v1/conformance?%s: %d %s, want 400 naming %s", c.query, w.Code, w.Body, c.param)
		}
	}
	// Well-formed filters still work, including non-ASCII ones.
	r := httptest.NewRequest("GET", "/v1/conformance?provider=%C3%A9t%C3%A9&prompt=triage", nil)
	r.Header.Set("Authorization", "Bearer "+opsKey)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("a valid filter: %d %s", w.Code, w.Body)
	}
}
