package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// Tool-call deltas whose indexes skip numbers (0, then 5) left calls 1 to 4
// with no id and no function name, and the answer came back with four
// phantom calls. Slots no delta wrote are dropped now: the caller gets the two
// calls the provider made. Some gateways number a lone call 1, after a text
// block at 0: that call alone comes back, not a refusal. Found by reviews.
func TestOpenAIStreamToolCallIndexGapsAreDropped(t *testing.T) {
	for name, deltas := range map[string][]string{
		"0 then 5": {
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":5,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":null}]}`,
		},
		"a lone call at 1": {
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look.","tool_calls":[{"index":1,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`,
		},
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w, append(deltas,
				`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":`+billedUsageJSON+`}`,
				"[DONE]")...)
		})
		resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var calls []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(resp.ToolCalls, &calls); err != nil {
			t.Fatal(err)
		}
		want := len(deltas)
		if len(calls) != want || calls[0].ID != "call_a" || calls[0].Function.Name != "f" {
			t.Fatalf("%s: tool calls %s, want the %d calls the provider made and no empty one", name, resp.ToolCalls, want)
		}
	}
}

// A call that deltas filled in part (arguments, no id and no name) is still
// refused: it cannot be run.
func TestOpenAIStreamPartToolCallIsMalformed(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"arguments":"{\"q\":1}"}}]},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":`+billedUsageJSON+`}`,
			"[DONE]")
	})
	resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if resp != nil {
		t.Fatalf("a tool call without id and name came back as an answer: %s", resp.ToolCalls)
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
