package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// A tool_use block whose "input" is null (a proxy's) comes back with the
// arguments "{}" streamed (startInput) and unstreamed (the SDK decodes the
// null as no input): a guard that the two paths keep agreeing (review suspected
// "null" unstreamed; anthropic-sdk-go v2 gives an empty Input for it).
func TestAnthropicToolUseNullInput(t *testing.T) {
	block := `{"type":"tool_use","id":"toolu_1","name":"get_time","input":null}`
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			if stream {
				anthSSE(w, anthStreamStart,
					`{"type":"content_block_start","index":0,"content_block":`+block+`}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}`,
					`{"type":"message_stop"}`)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[` + block +
				`],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}`))
		})
		resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		var calls []openAIToolCall
		if err := json.Unmarshal(resp.ToolCalls, &calls); err != nil || len(calls) != 1 {
			t.Fatalf("stream=%v: tool calls %s: %v", stream, resp.ToolCalls, err)
		}
		if got := calls[0].Function.Arguments; got != "{}" {
			t.Errorf("stream=%v: arguments %q, want {} for \"input\": null", stream, got)
		}
	}
}
