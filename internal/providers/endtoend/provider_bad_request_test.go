package endtoend_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// refusingTarget is an OpenAI-compatible target, streamed or not, whose
// server answers every call with status and body; calls counts them.
func refusingTarget(t *testing.T, name string, window int, stream bool, status int, body string, calls *atomic.Int32) *race.Target {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		calls.Add(1)
		if status == http.StatusOK && stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: name, BaseURL: srv.URL, APIKey: "sk-test", Model: "gpt-4o", Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	return &race.Target{Provider: p, Model: "gpt-4o", ContextWindow: window, Timeout: 30 * time.Second, Stream: stream}
}

// postChatCompletion sends body to /v1/chat/completions with the caller's
// key; it returns the status and the body, whole and as the error object of
// OpenAI's shape (a stream's error event's, when streamed).
func postChatCompletion(t *testing.T, url, body string) (int, map[string]any, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+callerKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	if i := strings.Index(raw, "data: {"); i >= 0 {
		raw = strings.TrimSpace(raw[i+len("data: "):])
	}
	var v struct {
		Error map[string]any `json:"error"`
	}
	_ = json.Unmarshal([]byte(raw), &v)
	return resp.StatusCode, v.Error, string(b)
}

const invalidContent = `{"error":{"message":"Invalid value for 'content': expected a string, got null.","type":"invalid_request_error","param":"messages.[0].content","code":"invalid_value"}}`

// A provider's 400 is answered to a chat caller as OpenAI's 400, with the
// provider's message — and now its param and code, which said "invalid_request"
// and null whatever the provider named: an SDK's caller (and its error
// handling by code) sees what OpenAI itself would have said. Streamed or not
// (the refusal comes before any byte of a stream: an error event). Found by
// review.
func TestProviderBadRequestKeepsParamAndCode(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var calls atomic.Int32
		srv, _ := serve(t, map[string]*race.Target{"openai": refusingTarget(t, "openai", 128000, stream, 400, invalidContent, &calls)}, "openai")
		status, e, raw := postChatCompletion(t, srv.URL,
			`{"model":"default","stream":`+map[bool]string{false: "false", true: "true"}[stream]+`,"messages":[{"role":"user","content":"x"}]}`)
		if !stream && status != http.StatusBadRequest {
			t.Fatalf("stream=%v: %d %s", stream, status, raw)
		}
		if e["type"] != "invalid_request_error" || e["param"] != "messages.[0].content" || e["code"] != "invalid_value" {
			t.Fatalf("stream=%v: the provider's param and code are lost: %d %s", stream, status, raw)
		}
		if msg, _ := e["message"].(string); !strings.Contains(msg, "expected a string, got null") || !strings.Contains(msg, "Correct the request") {
			t.Fatalf("stream=%v: the message does not say what was wrong and what to do: %s", stream, raw)
		}
	}
}

// A provider's 400 without a code of its own ("code": null, or vLLM's HTTP
// status as its code) is answered invalid_request, as before, with its param
// when it named one.
func TestProviderBadRequestWithoutCode(t *testing.T) {
	bodies := map[string]struct{ body, param string }{
		"null code": {`{"error":{"message":"We could not parse the JSON body of your request.","type":"invalid_request_error","param":null,"code":null}}`, ""},
		"vllm":      {`{"object":"error","message":"'temperature' must be at most 2.","type":"BadRequestError","param":"temperature","code":400}`, "temperature"},
	}
	for name, c := range bodies {
		var calls atomic.Int32
		srv, _ := serve(t, map[string]*race.Target{"openai": refusingTarget(t, "openai", 128000, false, 400, c.body, &calls)}, "openai")
		status, e, raw := postChatCompletion(t, srv.URL, `{"model":"default","messages":[{"role":"user","content":"x"}]}`)
		var param any
		if c.param != "" {
			param = c.param
		}
		if status != http.StatusBadRequest || e["code"] != "invalid_request" || e["param"] != param {
			t.Fatalf("%s: %d %s", name, status, raw)
		}
	}
}

const tooLongDescription = `{"error":{"message":"Invalid 'tools[0].function.description': string too long. Expected a string with maximum length 1024, but got a string with length 1500 instead.","type":"invalid_request_error","param":"tools[0].function.description","code":"string_above_max_length"}}`

// OpenAI's string_above_max_length is a limit of its API on one member of
// the request, not the prompt against the model's context: it was taken for
// context length, so the race skipped every target of a context window no
// larger than the refusing one's — here the only other target, which takes
// the request — and the caller heard context_length_exceeded with param
// "messages". Now the other target is tried and answers; and when none
// takes the request, the caller hears the provider's code and param. Found
// by review.
func TestStringAboveMaxLengthFailsOverWithoutWindowSkip(t *testing.T) {
	var refused, answered atomic.Int32
	answer := `{"id":"x","object":"chat.completion","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`
	srv, _ := serve(t, map[string]*race.Target{
		"openai": refusingTarget(t, "openai", 1000000, false, 400, tooLongDescription, &refused),
		"other":  refusingTarget(t, "other", 200000, false, 200, answer, &answered),
	}, "openai", "other")
	status, _, raw := postChatCompletion(t, srv.URL, `{"model":"default","messages":[{"role":"user","content":"x"}]}`)
	if status != http.StatusOK || !strings.Contains(raw, `"content":"done"`) || refused.Load() != 1 || answered.Load() != 1 {
		t.Fatalf("a target without OpenAI's limit was not tried (refused %d, answered %d): %d %s", refused.Load(), answered.Load(), status, raw)
	}

	var calls atomic.Int32
	srv, _ = serve(t, map[string]*race.Target{"openai": refusingTarget(t, "openai", 1000000, false, 400, tooLongDescription, &calls)}, "openai")
	status, e, raw := postChatCompletion(t, srv.URL, `{"model":"default","messages":[{"role":"user","content":"x"}]}`)
	if status != http.StatusBadRequest || e["code"] != "string_above_max_length" || e["param"] != "tools[0].function.description" {
		t.Fatalf("refused by every target: %d %s", status, raw)
	}
}
