package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Anthropic's cache_read_input_tokens is carried as the usage's
// prompt_tokens_details.cached_tokens, as the OpenAI-compatible adapter
// carries cached_tokens, plain and streamed; the prompt tokens stay every
// input token billed (input, cache writes and cache reads).
func TestAnthropicCarriesCacheReadTokens(t *testing.T) {
	const usage = `"usage":{"input_tokens":5,"cache_creation_input_tokens":3,"cache_read_input_tokens":40,"output_tokens":7}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"done"}],` +
				`"stop_reason":"end_turn","stop_sequence":null,` + usage + `}`))
			return
		}
		anthSSE(w,
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],`+
				`"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":3,"cache_read_input_tokens":40,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`,
			`{"type":"message_stop"}`)
	}))
	defer srv.Close()
	want := Usage{PromptTokens: 48, CompletionTokens: 7, TotalTokens: 55, PromptTokensDetails: PromptTokensDetails{CachedTokens: 40}}
	for _, stream := range []bool{false, true} {
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		resp, err := p.Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		if resp.Usage != want {
			t.Errorf("stream %v: usage %+v, want %+v", stream, resp.Usage, want)
		}
	}
}
