package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A gateway that passes Anthropic's stop reasons through its OpenAI-compatible
// endpoint (the case wholeFinishReason already maps "end_turn",
// "stop_sequence" and "max_tokens" for) passes the third whole one too:
// "tool_use", when Claude calls a tool (maximhq/bifrost#617: Claude on
// Bedrock answered /v1/chat/completions with finish_reason "tool_use" and
// its tool_calls). The answer is whole and billed; it must be returned with
// its calls and reported as "tool_calls", as the Anthropic adapter itself
// maps "tool_use" (anthropic_stream.go). Today it is refused as broken off
// (stream_cut / malformed_response, "does not say it is complete"): every
// tool call through such a gateway fails over and is paid for again.
func TestToolUseFinishIsWholeToolCall(t *testing.T) {
	const call = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"claude-sonnet-4","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}`
	const finish = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"claude-sonnet-4","choices":[{"index":0,"delta":{},"finish_reason":"tool_use"}]}`
	const plain = `{"id":"c","object":"chat.completion","created":1,"model":"claude-sonnet-4",
"choices":[{"index":0,"message":{"role":"assistant","content":"I'll look it up.","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_use"}],
"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`
	check := func(t *testing.T, resp *Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("a whole tool-call answer ending with finish_reason \"tool_use\" failed: %v", err)
		}
		if resp.FinishReason != "tool_calls" || !strings.Contains(string(resp.ToolCalls), `"get_weather"`) {
			t.Fatalf("finish_reason %q, tool calls %s; want tool_calls and the call", resp.FinishReason, resp.ToolCalls)
		}
	}
	t.Run("streamed", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w, call, finish, usageChunk)
			fmt.Fprint(w, "data: [DONE]\n\n")
		})
		resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		check(t, resp, err)
	})
	t.Run("unstreamed", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, plain)
		})
		resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		check(t, resp, err)
	})
}

// A tool_use finish (mapped to tool_calls) that holds no tool call is judged
// as a tool_calls finish without a call is (TestOpenAIToolCallFinishWithoutCallIsMalformed):
// the provider's fault, with the usage billed, not an answer; its error
// names the word the provider sent.
func TestToolUseFinishWithoutCallIsMalformed(t *testing.T) {
	unstreamed := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"no call here"},"finish_reason":"tool_use"}],"usage":` + billedUsageJSON + `}`))
	})
	resp, err := newTestAdapter(t, unstreamed.URL, nil).Complete(context.Background(), testRequest())
	if resp != nil {
		t.Fatalf("an answer without a tool call came back: %+v", resp)
	}
	e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false)
	if !strings.Contains(e.Message, "finish_reason tool_use but sent no tool call") {
		t.Fatalf("message %q does not say why", e.Message)
	}
	assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "c", "m")

	streamed := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"no call here"},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_use"}],"usage":`+billedUsageJSON+`}`,
			"[DONE]")
	})
	resp, err = newTestAdapter(t, streamed.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if resp != nil {
		t.Fatalf("a streamed answer without a tool call came back: %+v", resp)
	}
	e = assertKind(t, err, KindStreamMalformed, FaultProvider, ActionFailover, false)
	if !e.Received || !strings.Contains(e.Message, "finish_reason tool_use but sent no tool call") {
		t.Fatalf("streamed: received %v, message %q", e.Received, e.Message)
	}
	assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "c", "m")
}
