package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// An answer that ends with finish_reason tool_calls (or function_call) and
// holds no tool call — vLLM's when its tool parser fails on the model's text,
// which stays in the content — came back as a whole answer, and chat.Judge
// let it win: a caller branching on the finish reason ran a null tool_calls.
// The adapter fails it now as the provider's fault with the usage billed,
// and its error says why. Found by review.
func TestOpenAIToolCallFinishWithoutCallIsMalformed(t *testing.T) {
	const text = `<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>`
	for _, fr := range []string{"tool_calls", "function_call"} {
		unstreamed := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"` + text +
				`","tool_calls":[]},"finish_reason":"` + fr + `"}],"usage":` + billedUsageJSON + `}`))
		})
		resp, err := newTestAdapter(t, unstreamed.URL, nil).Complete(context.Background(), testRequest())
		if resp != nil {
			t.Fatalf("%s: an answer without a tool call came back: %+v", fr, resp)
		}
		e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false)
		if !strings.Contains(e.Message, "finish_reason "+fr+" but sent no tool call") {
			t.Fatalf("%s: message %q does not say why", fr, e.Message)
		}
		assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "c", "m")

		streamed := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w,
				`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"`+text+`"},"finish_reason":null}]}`,
				`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"`+fr+`"}],"usage":`+billedUsageJSON+`}`,
				"[DONE]")
		})
		resp, err = newTestAdapter(t, streamed.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		if resp != nil {
			t.Fatalf("%s: a streamed answer without a tool call came back: %+v", fr, resp)
		}
		e = assertKind(t, err, KindStreamMalformed, FaultProvider, ActionFailover, false)
		if !e.Received || !strings.Contains(e.Message, "finish_reason "+fr+" but sent no tool call") {
			t.Fatalf("%s: streamed: received %v, message %q", fr, e.Received, e.Message)
		}
		assertBilled(t, e, Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}, "c", "m")
	}
}
