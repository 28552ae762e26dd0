package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// The API's problems: the shared members, the request id of the request, the
// job id and violations (their members in name order, as always), and extras
// that replace none of them. The bytes are the ones clients have always had.
func TestWriteProblemBytes(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/jobs/j1/attempts/1/resolution", nil)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, "rid-1"))
	w := httptest.NewRecorder()
	writeProblem(w, r, problem{Status: 422, Type: "invalid-result", Title: "Result rejected", Detail: "d", JobID: "j1",
		Violations: []contract.Violation{{Rule: "schema.required", Path: "/a", Message: "missing <a>"}},
		Extra: map[string]any{"routing": json.RawMessage(`{"z":1,"a":2}`), "job_id": "forged", "violations": "forged",
			"type": "forged", "request_id": "forged"}})
	want := `{"detail":"d","instance":"/v1/jobs/j1/attempts/1/resolution","job_id":"j1","request_id":"rid-1",` +
		`"routing":{"z":1,"a":2},"status":422,"title":"Result rejected","type":"https://router.dev/problems/invalid-result",` +
		`"violations":[{"message":"missing \u003ca\u003e","path":"/a","rule":"schema.required"}]}` + "\n"
	if w.Code != 422 || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
	}
	if got := w.Body.String(); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}

	// Without a job id, violations or request id those members are absent,
	// even when Extra names them.
	w = httptest.NewRecorder()
	writeProblem(w, httptest.NewRequest("GET", "/v1/jobs", nil), problem{Status: 400, Type: "invalid-query", Title: "T", Detail: "d",
		Extra: map[string]any{"job_id": "forged", "violations": "forged"}})
	want = `{"detail":"d","instance":"/v1/jobs","status":400,"title":"T","type":"https://router.dev/problems/invalid-query"}` + "\n"
	if got := w.Body.String(); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}
