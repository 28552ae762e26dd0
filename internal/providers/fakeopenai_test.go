package providers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/testdb"
)

// apiErrorBody is an error body exactly as OpenAI sends it.
func apiErrorBody(message, typ string, param, code any) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": param, "code": code,
	}})
	return string(b)
}

// newFakeServer starts an httptest server closed at cleanup.
func newFakeServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// releaseAtCleanup returns a channel closed at cleanup. Registered after the
// server, it is closed before the server is (cleanups run last-in first-out), so
// handlers blocked on it return and srv.Close does not wait.
func releaseAtCleanup(t *testing.T) <-chan struct{} {
	ch := make(chan struct{})
	t.Cleanup(func() { close(ch) })
	return ch
}

func newTestAdapter(t *testing.T, baseURL string, mod func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{Name: "fake", BaseURL: baseURL, APIKey: "sk-test", Model: "gpt-test"}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testRequest() *Request {
	return &Request{
		AttemptID: "att-1",
		JobID:     "job-1",
		Messages:  []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}},
	}
}

func writeError(w http.ResponseWriter, status int, hdr map[string]string, body string) {
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

const completionBody = `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test-0613",
"choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`

// sse writes stream events and flushes after each.
func sse(w http.ResponseWriter, events ...string) {
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
	w.(http.Flusher).Flush()
}

func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func chunk(content string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	c, _ := json.Marshal(content)
	return fmt.Sprintf(`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test-0613","choices":[{"index":0,"delta":{"content":%s},"finish_reason":%s}],"usage":null}`, c, fr)
}

// closedAddr returns an address nothing listens on (testdb.ClosedAddr).
func closedAddr(t *testing.T) string {
	t.Helper()
	return testdb.ClosedAddr(t)
}

var httpDate = time.Date(2030, 1, 1, 0, 0, 30, 0, time.UTC)
