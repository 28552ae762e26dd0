package endtoend_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// geminiSignedCall is how Gemini 3's OpenAI compatibility layer streams a
// tool call: its thought signature in extra_content.google.thought_signature
// (ai.google.dev/gemini-api/docs/thought-signatures).
var geminiSignedCall = []string{
	`{"id":"g","object":"chat.completion.chunk","created":1,"model":"gemini-3-flash","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"SIG123"}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"call_1","type":"function"}]},"finish_reason":null}]}`,
	`{"id":"g","object":"chat.completion.chunk","created":1,"model":"gemini-3-flash","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	"[DONE]",
}

const (
	signedTools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`
	signature   = `"extra_content":{"google":{"thought_signature":"SIG123"}}`
)

// Gemini 3 refuses (HTTP 400) a turn whose assistant tool call does not send
// back the thought signature its answer gave the call in extra_content. The
// caller — streamed or not — gets it on the tool call, a replay of the stored
// job (the same Idempotency-Key) keeps it, and the history the caller sends
// back reaches the provider with it.
func TestToolCallExtraContentRoundTrip(t *testing.T) {
	var (
		mu   sync.Mutex
		sent []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range geminiSignedCall {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
	}))
	t.Cleanup(srv.Close)
	api, _ := serve(t, map[string]*race.Target{"gemini": openAITarget(t, "gemini", srv.URL)}, "gemini")
	post := func(key, body string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, api.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+callerKey)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
		}
		return string(b)
	}
	ask := `"messages":[{"role":"user","content":"weather in Paris"}],` + signedTools + `}`
	for _, stream := range []bool{true, false} {
		key := fmt.Sprintf("signed-stream-%v", stream)
		body := fmt.Sprintf(`{"model":"default","stream":%v,`, stream) + ask
		for _, round := range []string{"answer", "replay"} {
			got := post(key, body)
			if !strings.Contains(got, signature) || !strings.Contains(got, `"id":"call_1"`) {
				t.Errorf("stream=%v, %s: the caller's tool call lost its extra_content (Gemini's thought signature):\n%s", stream, round, got)
			}
		}
	}
	post("signed-history", `{"model":"default","messages":[{"role":"user","content":"weather in Paris"},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"},`+signature+`}]},`+
		`{"role":"tool","tool_call_id":"call_1","content":"sunny"}],`+signedTools+`}`)
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 3 {
		t.Fatalf("the provider was called %d times, want 3 (the replays come from the stored jobs)", len(sent))
	}
	if last := sent[len(sent)-1]; !strings.Contains(last, signature) {
		t.Errorf("the history's thought signature did not reach the provider; sent:\n%s", last)
	}
}
