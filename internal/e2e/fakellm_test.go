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

const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`

// fakeLLM is an OpenAI-compatible chat completions server living in the test
// process, so it counts calls across router processes. A user message that
// contains "hang" is held until the test ends; "slow" answers after 300 ms
// (every third call of a model); "tie-break" is held until the second call
// with the same message (the hedge) arrives, and then both answer at once;
// anything else answers at once with a valid triage.
type fakeLLM struct {
	srv     *httptest.Server
	release chan struct{}
	arrived chan string // user message of each call, as it arrives

	mu    sync.Mutex
	calls map[string]int           // by model
	byMsg map[string]int           // by user message
	ties  map[string]chan struct{} // "tie-break" messages: closed when the second call arrives
}

func newFakeLLM(t *testing.T) *fakeLLM {
	f := &fakeLLM{release: make(chan struct{}), arrived: make(chan string, 1000),
		calls: map[string]int{}, byMsg: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { close(f.release); f.srv.Close() })
	return f
}

func (f *fakeLLM) url() string { return f.srv.URL + "/v1" }

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	user := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m.Content
		}
	}
	f.mu.Lock()
	f.calls[req.Model]++
	f.byMsg[user]++
	n := f.calls[req.Model]
	var tie chan struct{}
	if strings.Contains(user, "tie-break") { // not "tie": the rendered triage prompt holds it
		if f.ties == nil {
			f.ties = map[string]chan struct{}{}
		}
		if tie = f.ties[user]; tie == nil {
			tie = make(chan struct{})
			f.ties[user] = tie
		}
		if f.byMsg[user] == 2 { // the hedge arrived: both answer at once
			close(tie)
		}
	}
	f.mu.Unlock()
	f.arrived <- user
	switch {
	case tie != nil:
		select {
		case <-tie:
		case <-f.release:
			return
		case <-r.Context().Done():
			return
		}
	case strings.Contains(user, "hang"):
		select {
		case <-f.release:
		case <-r.Context().Done():
		}
		return
	case strings.Contains(user, "slow") && n%3 == 0:
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	if req.Stream { // the router streams from providers by default
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ch := range []string{fmt.Sprintf(`"delta":{"role":"assistant","content":%q},"finish_reason":null`, validTriage),
			`"delta":{},"finish_reason":"stop"`} {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%s-%d\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[{\"index\":0,%s}]}\n\n",
				req.Model, n, time.Now().Unix(), req.Model, ch)
		}
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%s-%d\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":20,\"total_tokens\":70}}\n\ndata: [DONE]\n\n",
			req.Model, n, time.Now().Unix(), req.Model)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-%s-%d","object":"chat.completion","created":%d,"model":%q,
		"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`,
		req.Model, n, time.Now().Unix(), req.Model, validTriage)
}

func (f *fakeLLM) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func (f *fakeLLM) callsWith(substr string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for msg, c := range f.byMsg {
		if strings.Contains(msg, substr) {
			n += c
		}
	}
	return n
}
