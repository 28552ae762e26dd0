package ops_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/routerhq/router/internal/ops"
)

// The operator surface answers errors with problem+json: the router's type
// URIs, the request's path as instance, and no request id.
func TestProblemAnswers(t *testing.T) {
	s := ops.New(ops.Config{Key: opsKey}, nil, nil, nil)
	for _, c := range []struct {
		path, key string
		status    int
		typ       string
	}{
		{"/v1/providers", "", http.StatusUnauthorized, "https://router.dev/problems/unauthenticated"},
		{"/v1/nothing", opsKey, http.StatusNotFound, "https://router.dev/problems/not-found"},
	} {
		r := httptest.NewRequest("GET", c.path, nil)
		if c.key != "" {
			r.Header.Set("Authorization", "Bearer "+c.key)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != c.status {
			t.Fatalf("GET %s: status %d, want %d", c.path, w.Code, c.status)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
			t.Fatalf("GET %s: Content-Type %q", c.path, ct)
		}
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET %s: %v: %s", c.path, err, w.Body)
		}
		detail, _ := body["detail"].(string)
		title, _ := body["title"].(string)
		want := map[string]any{"type": c.typ, "title": title, "status": float64(c.status), "detail": detail, "instance": c.path}
		if !reflect.DeepEqual(body, want) || title == "" || detail == "" {
			t.Fatalf("GET %s: members %v, want %v with a title and a detail", c.path, body, want)
		}
	}
}
