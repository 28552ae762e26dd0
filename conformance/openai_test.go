package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// fakeOpenAI is an OpenAI-compatible chat completions server that answers each
// suite case with its reference reply (changed by mutate when set), in the
// OpenAI wire format, streamed or not.
type fakeOpenAI struct {
	t       *testing.T
	answers answers
	mutate  func(ans answer, content string) string

	mu       sync.Mutex
	requests []map[string]any
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	var req struct {
		Model    string              `json:"model"`
		Messages []providers.Message `json:"messages"`
		Stream   bool                `json:"stream"`
	}
	var raw map[string]any
	body := json.NewDecoder(r.Body)
	if err := body.Decode(&raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &req)
	f.mu.Lock()
	f.requests = append(f.requests, raw)
	f.mu.Unlock()
	ans, ok := f.answers.lookup(req.Messages)
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"unknown case","type":"invalid_request_error"}}`)
		return
	}
	content := ans.reference
	if f.mutate != nil {
		content = f.mutate(ans, content)
	}
	usage := map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		half := len(content) / 2
		for _, part := range []string{content[:half], content[half:]} {
			chunk, _ := json.Marshal(map[string]any{"id": "chatcmpl-" + ans.caseName, "object": "chat.completion.chunk", "created": 1700000000,
				"model": req.Model + "-2025", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": part}}}})
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		}
		last, _ := json.Marshal(map[string]any{"id": "chatcmpl-" + ans.caseName, "object": "chat.completion.chunk", "created": 1700000000,
			"model": req.Model + "-2025", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", last)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-" + ans.caseName, "object": "chat.completion", "created": 1700000000, "model": req.Model + "-2025",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   usage,
	})
}

func (f *fakeOpenAI) seen() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.requests...)
}

// Acceptance 3: the runner exercises the real OpenAI adapter end to end against
// an OpenAI-compatible server.
func TestRunnerThroughOpenAIAdapter(t *testing.T) {
	e := newEnv(t)
	fake := &fakeOpenAI{t: t, answers: e.answers}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	for _, stream := range []bool{false, true} {
		name := fmt.Sprintf("openai-stream-%v", stream)
		p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: name, BaseURL: srv.URL + "/v1", APIKey: "sk-test",
			Model: "gpt-4o-mini", Timeout: 30 * time.Second, StreamIdleTimeout: 10 * time.Second, Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		e.targets[name] = &race.Target{Provider: p, Model: "gpt-4o-mini", ContextWindow: 128000, Timeout: 30 * time.Second, Stream: stream}
	}
	rep := e.run(t, conformance.Options{})
	if !rep.Passed || len(rep.Results) != 4 {
		var b strings.Builder
		_ = rep.WriteTable(&b)
		t.Fatalf("report:\n%s", b.String())
	}
	for _, r := range rep.Results {
		for _, c := range r.Cases {
			if c.Encoding != "o200k_base" || c.PromptTokens == 0 || c.Usage == nil || c.Usage.TotalTokens != 120 ||
				c.ResponseModel != "gpt-4o-mini-2025" {
				t.Fatalf("%s %s: %+v", r.Provider, c.Name, c)
			}
		}
	}
	reqs := fake.seen()
	if want := 2 * (len(e.suites["triage"].Cases) + len(e.suites["invoice"].Cases)); len(reqs) != want {
		t.Fatalf("%d requests, want %d", len(reqs), want)
	}
	for _, r := range reqs {
		rf, _ := r["response_format"].(map[string]any)
		schema, _ := rf["json_schema"].(map[string]any)
		temp, sent := r["temperature"].(float64) // a prompt's temperature 0 is sent as 0
		if r["model"] != "gpt-4o-mini" || rf["type"] != "json_schema" || schema["schema"] == nil || !sent || temp != 0 {
			t.Fatalf("request: model %v response_format %v temperature %v", r["model"], rf, r["temperature"])
		}
	}
	var n int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM conformance_runs WHERE passed AND provider LIKE 'openai-%'`).Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d passing runs stored (%v)", n, err)
	}

	// The same server wrapping one case's answer in prose: schema failure
	// through the adapter, with the case and the rule.
	fake.mutate = func(ans answer, content string) string {
		if ans.caseName == "german-delivery-missing" {
			return "Here is the triage: " + content
		}
		return content
	}
	rep = e.run(t, conformance.Options{Providers: []string{"openai-stream-false"}, PromptNames: []string{"triage"}})
	r := rep.Results[0]
	if rep.Passed || r.CasesPassed != r.CasesTotal-1 {
		t.Fatalf("prose answer: passed=%v %d/%d", rep.Passed, r.CasesPassed, r.CasesTotal)
	}
	for _, c := range r.Cases {
		if c.Name == "german-delivery-missing" && (c.Passed || c.Failures[0].Rule != "json.syntax" || c.Failures[0].Path != "$") {
			t.Fatalf("prose case: %+v", c)
		}
	}
	st, err := e.st.ConformanceStanding(context.Background(), "openai-stream-false", "triage", "3", time.Hour)
	if err != nil || st.Eligible() {
		t.Fatalf("after the failing run: eligible=%v (%v)", st.Eligible(), err)
	}

	// An API error reaches the case as a provider failure with the taxonomy kind.
	bad, _ := providers.NewOpenAI(providers.OpenAIConfig{Name: "openai-badkey", BaseURL: srv.URL + "/v1", APIKey: "sk-wrong", Model: "gpt-4o-mini"})
	e.targets["openai-badkey"] = &race.Target{Provider: bad, Model: "gpt-4o-mini", ContextWindow: 128000, Timeout: 30 * time.Second}
	rep = e.run(t, conformance.Options{Providers: []string{"openai-badkey"}, PromptNames: []string{"triage"}})
	c := rep.Results[0].Cases[0]
	if c.Passed || c.Stage != conformance.StageProvider || !strings.HasPrefix(c.Failures[0].Rule, "provider.") {
		t.Fatalf("bad key: %+v", c)
	}
}
