package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/store"
)

// The API's problems: the shared members, the request id of the request, the
// job id and violations (their members in name order, as always), and extras
// that replace none of them. The bytes are the ones clients have always had.
func TestWriteProblemBytes(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/jobs/j1/attempts/1/resolution", nil)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, &requestInfo{id: "rid-1"}))
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

// writeJob answers exactly as writeJSON would for the same job: status,
// headers and body bytes (store.Job.AppendJSON in place of encoding/json).
func TestWriteJobAnswersAsWriteJSON(t *testing.T) {
	finished := time.Date(2026, 12, 1, 7, 8, 9, 123456789, time.UTC)
	by, cost := "a1", 0.00125
	job := &store.Job{
		ID: "j1", Owner: "acme", Operation: "triage", IdempotencyKey: "k <1> & 2", Route: "default",
		Input: json.RawMessage(`{"body": "It broke <again> & again", "n": [1, 2]}`), State: store.JobSucceeded, Version: 3,
		CreatedAt: finished.Add(-time.Second), UpdatedAt: finished, FinishedAt: &finished, KeyExpiresAt: &finished,
		Result: json.RawMessage(`{"category": "bug"}`), CompletedBy: &by, Routing: json.RawMessage(`{"plan": []}`),
		Attempts:   []store.Attempt{{ID: "a1", Seq: 1, Provider: "p", Role: store.RolePrimary, State: "won", CreatedAt: finished, CostUSD: &cost}},
		RaceEvents: []store.RaceEvent{},
	}
	for range 2 { // the second from a pooled buffer
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		writeJSON(want, http.StatusCreated, job)
		writeJob(got, http.StatusCreated, job, "")
		if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) {
			t.Fatalf("writeJob: %d %v, writeJSON: %d %v", got.Code, got.Header(), want.Code, want.Header())
		}
		if got.Body.String() != want.Body.String() {
			t.Fatalf("writeJob wrote\n%s\nwriteJSON\n%s", got.Body, want.Body)
		}
	}
}

// writeJobList answers a page of GET /v1/jobs with the bytes writeJSON wrote
// for it: an empty page as [], a cursor or null.
func TestWriteJobListAnswersAsWriteJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 7, 8, 9, 0, time.UTC)
	a := &store.Job{ID: "j1", Owner: "acme", Input: json.RawMessage(`{"a": "<b>"}`), State: store.JobPending, CreatedAt: at, UpdatedAt: at}
	b := &store.Job{ID: "j2", Owner: "acme", Input: json.RawMessage(`{}`), State: store.JobSucceeded, CreatedAt: at, UpdatedAt: at,
		Result: json.RawMessage(`{"x": [1, 2]}`), Attempts: []store.Attempt{}}
	cursor := "eyJ0IjoiMjAyNi0xMi0wMSJ9"
	for _, c := range []struct {
		jobs []*store.Job
		next *string
	}{{nil, nil}, {[]*store.Job{a}, nil}, {[]*store.Job{a, b}, &cursor}} {
		data := c.jobs
		if data == nil {
			data = []*store.Job{}
		}
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		writeJSON(want, http.StatusOK, struct {
			Data       []*store.Job `json:"data"`
			NextCursor *string      `json:"next_cursor"`
		}{data, c.next})
		writeJobList(got, c.jobs, c.next)
		if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) || got.Body.String() != want.Body.String() {
			t.Fatalf("writeJobList: %d %v\n%s\nwriteJSON: %d %v\n%s", got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
}
