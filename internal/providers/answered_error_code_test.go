package providers

import (
	"context"
	"net/http"
	"testing"
)

// The numeric code of an error object that opens a 200 stream is read as
// the HTTP status it names in each shape the stream can carry it: an error
// line go-openai decodes ({"error": {...}}), one it cannot ({"error":
// "text", "code": 400}: TGI-style text), and an error beside a chunk
// (OpenRouter's, with finish_reason "error"). The error keeps StatusCode 0
// (HTTP said 200) and AnsweredWithError. After a chunk of the answer the
// same code is no verdict on the request: it stays a retried server_error.
func TestAnsweredErrorCodeIsItsStatusOnlyBeforeTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ev         string
		afterChunk bool
		want       Kind
	}{
		{"error text opening", `{"error":"Input validation error: temperature must be strictly positive","code":400}`, false, KindBadRequest},
		{"error chunk opening", `{"id":"gen-1","object":"chat.completion.chunk","created":1700000001,"model":"m","choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],` +
			`"error":{"code":403,"message":"Key limit exceeded"}}`, false, KindAuth},
		{"error object after a chunk", `{"error":{"code":400,"message":"Provider returned error"}}`, true, KindServerError},
		{"error chunk after a chunk", `{"id":"gen-1","object":"chat.completion.chunk","created":1700000001,"model":"m","choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],` +
			`"error":{"code":400,"message":"Provider returned error"}}`, true, KindServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				if tc.afterChunk {
					sse(w, chunk("half", ""))
				}
				sse(w, tc.ev)
			})
			_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			e := mustError(t, err)
			if e.Kind != tc.want || e.StatusCode != 0 || e.AnsweredWithError == tc.afterChunk {
				t.Fatalf("%s: kind %s (HTTP %d) action %s answered with error %v; want kind %s, no status, answered with error %v (message %q)",
					tc.name, e.Kind, e.StatusCode, e.Action, e.AnsweredWithError, tc.want, !tc.afterChunk, e.Message)
			}
		})
	}
}

// A 200 body that is an error object with a numeric code keeps StatusCode
// 0 (HTTP said 200) while it is classified as the status it names.
func TestAnsweredErrorBodyKeepsNoStatus(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"error":{"code":413,"message":"Request too large for the upstream"}}`))
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind != KindBadRequest || e.StatusCode != 0 || !e.AnsweredWithError || e.Code != "413" {
		t.Fatalf("kind %s (HTTP %d) code %q answered with error %v; want %s, no status, code 413, answered with error",
			e.Kind, e.StatusCode, e.Code, e.AnsweredWithError, KindBadRequest)
	}
}
