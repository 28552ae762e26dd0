package problem

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// write answers a GET of path with d and returns the recorder and the body's members.
func write(t *testing.T, path string, d Details) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	Write(w, httptest.NewRequest("GET", path, nil), d)
	dec := json.NewDecoder(strings.NewReader(w.Body.String()))
	var body map[string]any
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body is not a JSON object: %v", err)
	}
	if dec.More() {
		t.Fatal("more than one JSON value")
	}
	return w, body
}

func TestWriteHeadersAndBytes(t *testing.T) {
	w := httptest.NewRecorder()
	Write(w, httptest.NewRequest("GET", "/v1/jobs/j1", nil), Details{Status: 404, Type: "job-not-found",
		Title: "Job not found", Detail: "no job <j1>", RequestID: "rid-1", Extra: map[string]any{"job_id": "j1"}})
	if w.Code != 404 {
		t.Fatalf("status %d, want 404", w.Code)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	// The exact bytes clients have always had: members in name order, HTML escaped, one line.
	want := `{"detail":"no job \u003cj1\u003e","instance":"/v1/jobs/j1","job_id":"j1","request_id":"rid-1",` +
		`"status":404,"title":"Job not found","type":"https://router.dev/problems/job-not-found"}` + "\n"
	if got := w.Body.String(); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}

func TestWriteMembers(t *testing.T) {
	_, body := write(t, "/v1/conformance", Details{Status: 503, Type: "unavailable", Title: "T", Detail: ""})
	want := map[string]any{"type": "https://router.dev/problems/unavailable", "title": "T", "status": float64(503),
		"detail": "", "instance": "/v1/conformance"}
	if !reflect.DeepEqual(body, want) {
		t.Fatalf("members %v, want %v", body, want)
	}
}

func TestWriteTypeURI(t *testing.T) {
	for typ, want := range map[string]string{
		"invalid-json":          "https://router.dev/problems/invalid-json",
		"":                      "about:blank",
		"https://example.com/p": "https://example.com/p",
		"http://example.com/p":  "http://example.com/p",
		"about:blank":           "https://router.dev/problems/about:blank",
		"https-but-not-a-uri":   "https://router.dev/problems/https-but-not-a-uri",
	} {
		_, body := write(t, "/x", Details{Status: 400, Type: typ, Title: "T", Detail: "d"})
		if body["type"] != want {
			t.Errorf("type %q written as %v, want %q", typ, body["type"], want)
		}
	}
}

func TestWriteInstance(t *testing.T) {
	if _, body := write(t, "/v1/jobs/a", Details{Status: 400}); body["instance"] != "/v1/jobs/a" {
		t.Fatalf("instance %v, want the request's path", body["instance"])
	}
	if _, body := write(t, "/v1/jobs/a", Details{Status: 400, Instance: "/given"}); body["instance"] != "/given" {
		t.Fatalf("instance %v, want the given one", body["instance"])
	}
}

func TestWriteRequestIDOnlyWhenGiven(t *testing.T) {
	if _, body := write(t, "/x", Details{Status: 400}); has(body, "request_id") {
		t.Fatalf("request_id written without one: %v", body)
	}
	// An extension member cannot stand in for a missing request id either.
	if _, body := write(t, "/x", Details{Status: 400, Extra: map[string]any{"request_id": "forged"}}); has(body, "request_id") {
		t.Fatalf("request_id taken from Extra: %v", body)
	}
	if _, body := write(t, "/x", Details{Status: 400, RequestID: "rid-9"}); body["request_id"] != "rid-9" {
		t.Fatalf("request_id %v, want rid-9", body["request_id"])
	}
}

func TestWriteExtra(t *testing.T) {
	routing := json.RawMessage(`{"z": 1, "a": [2]}`)
	w, body := write(t, "/x", Details{Status: 429, Type: "too-many", Title: "Title", Detail: "Detail", RequestID: "rid",
		Extra: map[string]any{
			"limit": "max_live_jobs", "routing": routing,
			"type": "forged", "title": "forged", "status": 200, "detail": "forged", "instance": "forged", "request_id": "forged",
		}})
	want := map[string]any{"type": "https://router.dev/problems/too-many", "title": "Title", "status": float64(429),
		"detail": "Detail", "instance": "/x", "request_id": "rid", "limit": "max_live_jobs",
		"routing": map[string]any{"z": float64(1), "a": []any{float64(2)}}}
	if !reflect.DeepEqual(body, want) {
		t.Fatalf("members %v, want %v", body, want)
	}
	if w.Code != 429 {
		t.Fatalf("status %d: Extra replaced it", w.Code)
	}
	// Extension values are written as given: a raw JSON value keeps its member order.
	if got := w.Body.String(); !strings.Contains(got, `"routing":{"z":1,"a":[2]}`) {
		t.Fatalf("routing not written as given: %s", got)
	}
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }
