package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultLLM is an OpenAI-compatible chat completions server that injects one
// fault per model name (see serve), streaming when asked to as OpenAI does.
// Every answer it gives whole is answerFor(model); calls are counted per model.
type faultLLM struct {
	srv     *httptest.Server
	release chan struct{} // closed when the test ends: held calls return

	mu    sync.Mutex
	calls map[string]int
}

func newFaultLLM(t *testing.T) *faultLLM {
	f := &faultLLM{release: make(chan struct{}), calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { close(f.release); f.srv.Close() })
	return f
}

func (f *faultLLM) url() string { return f.srv.URL + "/v1" }

func (f *faultLLM) count(model string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[model]
}

// answerFor is the whole answer of model; a caller that receives anything else
// got a truncated or foreign answer.
func answerFor(model string) string {
	return "answer from " + model + ": the quick brown fox jumps over the lazy dog."
}

// usageFor is the usage model reports.
func usageFor(model string) map[string]int {
	n := len(model)
	return map[string]int{"prompt_tokens": 10 + n, "completion_tokens": 5 + n, "total_tokens": 15 + 2*n}
}

type fakeRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (f *faultLLM) serve(w http.ResponseWriter, r *http.Request) {
	var req fakeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "bad json")
		return
	}
	f.mu.Lock()
	f.calls[req.Model]++
	n := f.calls[req.Model]
	f.mu.Unlock()
	m := req.Model
	switch {
	case m == "rl-after" && n == 1:
		w.Header().Set("Retry-After", "1")
		apiError(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded", "Rate limit reached; retry after 1s")
	case m == "rl-plain" && n == 1:
		apiError(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded", "Rate limit reached")
	case m == "once500" && n == 1:
		apiError(w, http.StatusInternalServerError, "server_error", "", "The server had an error processing your request")
	case m == "down500":
		apiError(w, http.StatusInternalServerError, "server_error", "", "The server had an error processing your request")
	case m == "down503":
		apiError(w, http.StatusServiceUnavailable, "server_error", "", "The engine is currently overloaded")
	case m == "flap" && n <= 5:
		apiError(w, http.StatusServiceUnavailable, "server_error", "", "flapping: down")
	case m == "reset":
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			if tc, ok := conn.(interface{ SetLinger(int) error }); ok {
				_ = tc.SetLinger(0) // close with a RST
			}
			conn.Close()
		}
	case m == "silent":
		f.hold(r, 0)
	case m == "ctxlen":
		apiError(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			"This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.")
	case m == "filter":
		apiError(w, http.StatusBadRequest, "invalid_request_error", "content_filter",
			"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.")
	case m == "prefill-f":
		apiError(w, http.StatusBadRequest, "invalid_request_error", "",
			"This model does not support assistant message prefill. The conversation must end with a user message.")
	case !req.Stream:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%s-%d", m, n), "object": "chat.completion", "created": time.Now().Unix(), "model": m,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": answerFor(m)}}},
			"usage": usageFor(m),
		})
	default:
		f.stream(w, r, req, n)
	}
}

// stream answers in OpenAI's SSE chunks, with the stream faults.
func (f *faultLLM) stream(w http.ResponseWriter, r *http.Request, req fakeRequest, n int) {
	m := req.Model
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flush := func() { w.(http.Flusher).Flush() }
	flush()
	base := map[string]any{"id": fmt.Sprintf("chatcmpl-%s-%d", m, n), "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": m}
	send := func(extra map[string]any) {
		ch := map[string]any{}
		for k, v := range base {
			ch[k] = v
		}
		for k, v := range extra {
			ch[k] = v
		}
		b, _ := json.Marshal(ch)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush()
	}
	delta := func(s string) {
		send(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}, "finish_reason": nil}}})
	}
	switch m {
	case "slow-first":
		f.hold(r, 20*time.Second)
	case "prefill":
		f.hold(r, 12*time.Second)
	}
	if r.Context().Err() != nil {
		return
	}
	words := strings.SplitAfter(answerFor(m), " ")
	for i, word := range words {
		if i == 3 {
			switch m {
			case "cut", "usage":
				panic(http.ErrAbortHandler) // the connection drops mid-stream
			case "stall":
				f.hold(r, 0)
				return
			case "malformed":
				fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"jum\n\n")
				flush()
				return
			}
		}
		delta(word)
	}
	send(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"choices": []any{}, "usage": usageFor(m)})
	}
	if m == "nodone" {
		return // the stream ends without data: [DONE]
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush()
}

// hold waits d (0: until the call or the test ends).
func (f *faultLLM) hold(r *http.Request, d time.Duration) {
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-after:
	case <-r.Context().Done():
	case <-f.release:
	}
}

func apiError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": c, "param": nil}})
}
