package endtoend_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// wholeAnswerTarget is a target called without streaming, on a provider that
// answers each request's decoded body with handle's status and JSON; the
// bodies it received are returned too.
func wholeAnswerTarget(t *testing.T, model string, handle func(body map[string]any) (int, string)) (*race.Target, func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		status, answer := handle(body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "oa", BaseURL: srv.URL, APIKey: "sk-test", Model: model})
	if err != nil {
		t.Fatal(err)
	}
	sent := func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), bodies...)
	}
	return &race.Target{Provider: p, Model: model, ContextWindow: 128000, Timeout: 30 * time.Second}, sent
}

// postPlainChat sends a chat completion that is not streamed and returns the
// status and the body.
func postPlainChat(t *testing.T, url, body string) (int, string) {
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
	return resp.StatusCode, string(b)
}

// A whole answer whose content is an array of parts (Mistral's Magistral:
// a thinking part, then text) reached the caller as a 502 "the answer is
// empty", and its target's breaker counted it. The caller gets the text.
// Found by review (rchat2 #2).
func TestUnstreamedContentPartsReachTheCaller(t *testing.T) {
	target, _ := wholeAnswerTarget(t, "magistral-medium-latest", func(map[string]any) (int, string) {
		return 200, `{"id":"x","object":"chat.completion","created":1700000000,"model":"magistral-medium-latest","choices":[{"index":0,"message":{"role":"assistant","content":[` +
			`{"type":"thinking","thinking":[{"type":"text","text":"2+2 is 4"}]},{"type":"text","text":"The answer is 4."}]},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`
	})
	srv, _ := serve(t, map[string]*race.Target{"mistral": target}, "mistral")
	status, raw := postPlainChat(t, srv.URL, `{"model":"default","messages":[{"role":"user","content":"2+2?"}]}`)
	if status != http.StatusOK || !strings.Contains(raw, `"content":"The answer is 4."`) || strings.Contains(raw, "2+2 is 4") {
		t.Fatalf("a whole answer with content parts: %d %s", status, raw)
	}
}

// A caller's max_completion_tokens reached a fine-tuned reasoning model
// (ft:o4-mini-…) as max_tokens, which OpenAI refuses for it: the caller got
// the provider's 400. It is sent as max_completion_tokens. Found by review
// (rchat2 #3).
func TestMaxCompletionTokensReachFineTunedReasoningModel(t *testing.T) {
	const model = "ft:o4-mini-2025-04-16:acme::abc123"
	target, sent := wholeAnswerTarget(t, model, func(body map[string]any) (int, string) {
		if _, ok := body["max_tokens"]; ok {
			return 400, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`
		}
		return 200, `{"id":"x","object":"chat.completion","created":1700000000,"model":"` + model + `","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`
	})
	srv, _ := serve(t, map[string]*race.Target{"openai": target}, "openai")
	status, raw := postPlainChat(t, srv.URL, `{"model":"default","messages":[{"role":"user","content":"2+2?"}],"max_completion_tokens":500}`)
	if status != http.StatusOK {
		t.Fatalf("max_completion_tokens sent by the caller reached the provider as %v: %d %s", sent(), status, raw)
	}
	if b := sent(); len(b) != 1 || b[0]["max_completion_tokens"] != float64(500) {
		t.Fatalf("the provider got %v, want max_completion_tokens 500", b)
	}
}
