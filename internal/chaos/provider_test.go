package chaos_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`

// providerMode is how a fake provider treats the requests that arrive.
type providerMode int32

const (
	modeNormal providerMode = iota
	modeDrop                // hijack the connection and close it before any byte
	modeHang                // hold the request until the phase ends, then answer late
)

// fakeProvider is an OpenAI-compatible chat completions server whose fault
// mode the run switches. It answers JSON or SSE, as the request asks.
type fakeProvider struct {
	name string
	srv  *httptest.Server
	mode atomic.Int32

	mu      sync.Mutex
	release chan struct{} // closed when a hang phase ends

	calls, dropped, hung atomic.Int64
}

func newFakeProvider(t *testing.T, name string) *fakeProvider {
	f := &fakeProvider{name: name, release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { f.setMode(modeNormal); f.srv.Close() })
	return f
}

func (f *fakeProvider) url() string { return f.srv.URL + "/v1" }

// setMode switches the mode; leaving modeHang releases every held request.
func (f *fakeProvider) setMode(m providerMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if providerMode(f.mode.Swap(int32(m))) == modeHang && m != modeHang {
		close(f.release)
		f.release = make(chan struct{})
	}
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	n := f.calls.Add(1)
	switch providerMode(f.mode.Load()) {
	case modeDrop:
		f.dropped.Add(1)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	case modeHang:
		f.hung.Add(1)
		f.mu.Lock()
		release := f.release
		f.mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
	default:
		select {
		case <-time.After(time.Duration(5+rand.IntN(30)) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	id := fmt.Sprintf("chatcmpl-%s-%d", f.name, n)
	created := time.Now().Unix()
	content, _ := json.Marshal(validTriage)
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := http.NewResponseController(w)
		for _, delta := range []string{`{"role":"assistant","content":""}`, `{"content":` + string(content) + `}`} {
			fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n",
				id, created, req.Model, delta)
			_ = fl.Flush()
		}
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":20,\"total_tokens\":70}}\n\ndata: [DONE]\n\n",
			id, created, req.Model)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q,"object":"chat.completion","created":%d,"model":%q,
		"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`, id, created, req.Model, content)
}
