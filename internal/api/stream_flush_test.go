package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// flushRecorder is a ResponseWriter that records, in order, the status, each
// write and each flush, as a streaming caller's connection would see them go
// out. It says on commentWritten when a keep-alive comment was written.
type flushRecorder struct {
	mu             sync.Mutex
	h              http.Header
	ops            []string // "header", "flush", or the bytes written
	commentWritten chan struct{}
	once           sync.Once
}

func (f *flushRecorder) Header() http.Header { return f.h }

func (f *flushRecorder) WriteHeader(int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, "header")
}

func (f *flushRecorder) Write(b []byte) (int, error) {
	f.mu.Lock()
	f.ops = append(f.ops, "write:"+string(b))
	f.mu.Unlock()
	if strings.HasPrefix(string(b), ":") {
		f.once.Do(func() { close(f.commentWritten) })
	}
	return len(b), nil
}

func (f *flushRecorder) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, "flush")
}

// SPEC §15: a streaming chat caller gets its headers at once and a keep-alive
// comment while it waits, and every event goes out as it is written. Through
// the API's own middleware (which wraps the ResponseWriter), the headers, each
// keep-alive comment and each event are flushed to the connection — not held
// in its buffer until 4 KiB of them have piled up or the handler returns.
func TestChatStreamFlushesEveryEvent(t *testing.T) {
	rec := &flushRecorder{h: http.Header{}, commentWritten: make(chan struct{})}
	b := setup(t, options{keepAlive: time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		<-rec.commentWritten // the answer comes after a keep-alive comment
		return providers.Step{Output: "an answer long enough to take two chunks of sixty-four bytes each, or more",
			Usage: &providers.Usage{PromptTokens: 3, CompletionTokens: 5, TotalTokens: 8}}
	}})
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(
		`{"model":"default","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	b.api.ServeHTTP(rec, req)

	rec.mu.Lock()
	ops := append([]string(nil), rec.ops...)
	rec.mu.Unlock()
	if rec.h.Get("X-Router-Job-Id") == "" || rec.h.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("headers %v", rec.h)
	}
	if len(ops) < 2 || ops[0] != "header" || ops[1] != "flush" {
		t.Fatalf("the headers were not flushed at once: %q", ops)
	}
	writes, done := 0, false
	for i, op := range ops {
		if !strings.HasPrefix(op, "write:") {
			continue
		}
		writes++
		done = done || op == "write:data: [DONE]\n\n"
		if i+1 >= len(ops) || ops[i+1] != "flush" {
			t.Fatalf("write %q was not flushed before the next one: %q", op, ops)
		}
	}
	if !done || writes < 5 {
		t.Fatalf("%d writes, [DONE] %v: %q", writes, done, ops)
	}
}
