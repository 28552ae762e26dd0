package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An Anthropic message with stop_reason tool_use and no tool_use block came
// back as a whole answer (finish "tool_calls", no tool calls): a caller that
// branches on the finish reason ran a null tool_calls. It is refused as the
// OpenAI-compatible adapter refuses finish_reason tool_calls without a call:
// malformed_response (stream_malformed streamed), billed, failed over. Found
// by review.
func TestAnthropicToolUseWithoutCallIsMalformed(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			if !stream {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"<tool>get_weather</tool>"}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`,
				`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
				`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
				`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`,
				`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
			} {
				fmt.Fprint(w, ev+"\n\n")
			}
		})
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		resp, err := p.Complete(context.Background(), testRequest())
		if resp != nil {
			t.Fatalf("stream=%v: tool_use stop with no tool call accepted: finish=%q tool_calls=%s", stream, resp.FinishReason, resp.ToolCalls)
		}
		kind := KindMalformedResponse
		if stream {
			kind = KindStreamMalformed
		}
		e := assertKind(t, err, kind, FaultProvider, ActionFailover, false)
		if !e.Received || !strings.Contains(e.Message, "stop_reason tool_use but sent no tool call") {
			t.Fatalf("stream=%v: received %v message %q", stream, e.Received, e.Message)
		}
		assertBilled(t, e, Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}, "msg_1", "claude-test")
	}
}
