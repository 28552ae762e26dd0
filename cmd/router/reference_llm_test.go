package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// referenceLLM is an OpenAI-compatible server that answers each conformance
// case of the shipped suites with its reference reply (referenceByInput) and
// counts the requests by the model they ask for.
type referenceLLM struct {
	*httptest.Server
	mu    sync.Mutex
	asked map[string]int
}

func newReferenceLLM(t *testing.T) *referenceLLM {
	t.Helper()
	refs := referenceByInput(t)
	l := &referenceLLM{asked: map[string]int{}}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		l.mu.Lock()
		l.asked[req.Model]++
		l.mu.Unlock()
		content, ok := refs[req.Messages[len(req.Messages)-1].Content]
		if !ok {
			http.Error(w, `{"error":{"message":"unknown case"}}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	t.Cleanup(l.Close)
	return l
}

// Asked is a copy of the requests so far by model.
func (l *referenceLLM) Asked() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.asked)
}

// Reset forgets the requests so far.
func (l *referenceLLM) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.asked)
}
