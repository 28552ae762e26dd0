package providers

import (
	"context"
	"net/http"
	"testing"
)

// Tool-call deltas whose indexes skip numbers (0, then 5) left calls 1 to 4
// with no id and no function name, and the answer came back as valid tool
// calls. An assembled call without an id or a name is stream_malformed now:
// a known outcome with the usage billed, failed over. Found by review.
func TestOpenAIStreamToolCallIndexGapIsMalformed(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":5,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":`+billedUsageJSON+`}`,
			"[DONE]")
	})
	resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if resp != nil {
		t.Fatalf("tool calls with an index gap came back as an answer: %s", resp.ToolCalls)
	}
	e := assertKind(t, err, KindStreamMalformed, FaultProvider, ActionFailover, false)
	if !e.Received {
		t.Fatalf("not marked received: %v", e)
	}
	assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "c", "m")
}

// The unstreamed answer: a tool call without a function name is
// malformed_response.
func TestOpenAICompleteToolCallWithoutNameIsMalformed(t *testing.T) {
	for _, call := range []string{
		`{"id":"call_a","type":"function","function":{"name":"","arguments":"{}"}}`,
		`{"type":"function","function":{"arguments":"{}"}}`,
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` + call + `]},"finish_reason":"tool_calls"}]}`))
		})
		resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		if resp != nil {
			t.Fatalf("tool call %s came back as an answer", call)
		}
		if e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false); !e.Received {
			t.Fatalf("not marked received: %v", e)
		}
	}
}

// The Anthropic adapter holds its tool calls to the same rule: a tool_use
// block without an id (or a name) is malformed_response, billed.
func TestAnthropicToolUseWithoutIDIsMalformed(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-1","content":[{"type":"tool_use","id":"","name":"f","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":7}}`))
	})
	resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = false }).Complete(context.Background(), testRequest())
	if resp != nil {
		t.Fatalf("a tool_use block without an id came back as an answer: %s", resp.ToolCalls)
	}
	e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false)
	assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "msg_1", "claude-test-1")
}
