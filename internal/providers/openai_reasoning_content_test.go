package providers

import (
	"context"
	"net/http"
	"testing"
)

// DeepSeek's reasoner (and vLLM's and SGLang's reasoning parsers) answer
// with the model's reasoning in message.reasoning_content beside the
// answer. The adapter dropped it. It is kept, sanitised (a NUL in it must
// not make the answer unstorable), and is not the content. Found by review
// (rchat2 #5).
func TestReasoningContentUnstreamed(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusOK, nil, `{"id":"x","object":"chat.completion","created":1700000000,"model":"deepseek-reasoner",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"4","reasoning_content":"2+2 is 4\u0000"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":5}}}`)
	})
	resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "4" || resp.ReasoningContent != "2+2 is 4\uFFFD" {
		t.Fatalf("content %q, reasoning %q", resp.Content, resp.ReasoningContent)
	}
	if resp.Usage.CompletionTokens != 9 || resp.Usage.CompletionTokensDetails.ReasoningTokens != 5 {
		t.Fatalf("usage %+v", resp.Usage)
	}
}

// A stream's reasoning_content deltas are assembled as its content is, and
// kept apart from it.
func TestReasoningContentStreamed(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w,
			`{"id":"s","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"finish_reason":null}]}`,
			`{"id":"s","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"2+2 "},"finish_reason":null}]}`,
			`{"id":"s","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"is 4"},"finish_reason":null}]}`,
			`{"id":"s","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"4","reasoning_content":null},"finish_reason":null}]}`,
			`{"id":"s","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}`,
			`{"id":"s","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`,
			"[DONE]")
	})
	resp, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "4" || resp.ReasoningContent != "2+2 is 4" || resp.Usage.CompletionTokens != 9 {
		t.Fatalf("content %q, reasoning %q, usage %+v", resp.Content, resp.ReasoningContent, resp.Usage)
	}
}
