package providers

import (
	"context"
	"net/http"
	"testing"
)

// An unstreamed answer (cfg.Stream false) keeps each tool call's
// extra_content (Gemini's thought signature) — and a server that ignores
// stream:true and sends the whole chat.completion (streamedPlain) too.
// Needs openai.go (and openai_stream_plain.go) to call responseBody with the body.
func TestUnstreamedToolCallKeepsExtraContent(t *testing.T) {
	body := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[` +
		`{"extra_content":` + sig + `,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	want := `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":` + sig + `}]`
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	})
	for _, stream := range []bool{false, true} {
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
		resp, err := p.Complete(context.Background(), testRequest())
		if err != nil || string(resp.ToolCalls) != want {
			t.Fatalf("stream=%v: tool calls %v (%v), want %s", stream, resp, err, want)
		}
	}
}
