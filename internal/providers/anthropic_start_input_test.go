package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

const anthStreamStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`

// A tool_use whose input comes whole in content_block_start (a proxy, or a
// replayed message), with no input_json_delta, was returned with arguments
// "{}": the call's arguments lost. They are taken from the start block now;
// deltas, when they come, replace them as in the SDK's Message.Accumulate.
// Found by review.
func TestAnthropicStreamToolInputInStartBlock(t *testing.T) {
	cases := map[string][]string{
		"input in the start block only": {
			anthStreamStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}}`,
			`{"type":"content_block_stop","index":0}`,
		},
		"input in the start block and again in deltas": {
			anthStreamStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
			`{"type":"content_block_stop","index":0}`,
		},
		"empty start input, deltas (Anthropic's own)": {
			anthStreamStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
			`{"type":"content_block_stop","index":0}`,
		},
	}
	end := []string{
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}`,
		`{"type":"message_stop"}`,
	}
	for name, evs := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				anthSSE(w, append(evs, end...)...)
			}))
			defer srv.Close()
			resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
			if err != nil {
				t.Fatal(err)
			}
			var calls []openAIToolCall
			if err := json.Unmarshal(resp.ToolCalls, &calls); err != nil || len(calls) != 1 {
				t.Fatalf("tool calls %s: %v", resp.ToolCalls, err)
			}
			if got := calls[0].Function.Arguments; got != `{"city":"Paris"}` {
				t.Errorf("arguments %s, want {\"city\":\"Paris\"}", got)
			}
			if resp.FinishReason != "tool_calls" {
				t.Errorf("finish reason %q", resp.FinishReason)
			}
		})
	}
}
