package providers

import (
	"context"
	"net/http"
	"testing"
)

// Newer vLLM releases and OpenRouter answer with the model's reasoning in
// message.reasoning (streamed: delta.reasoning) rather than
// reasoning_content; go-openai decodes only the latter, and the reasoning
// was dropped. It is kept as reasoning_content is (sanitised), and an answer
// with both is taken by its reasoning_content. A "reasoning" that is not a
// string (null, an object) is none. Found by review (wchat3).
func TestReasoningFieldUnstreamed(t *testing.T) {
	cases := []struct{ name, message, want string }{
		{"reasoning", `"reasoning":"2+2 is 4\u0000"`, "2+2 is 4\uFFFD"},
		{"spaced", `"reasoning" :  "2+2 is 4"`, "2+2 is 4"},
		{"both", `"reasoning_content":"from reasoning_content","reasoning":"from reasoning"`, "from reasoning_content"},
		{"null", `"reasoning":null`, ""},
		{"object", `"reasoning":{"effort":"high"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				writeError(w, http.StatusOK, nil, `{"id":"x","object":"chat.completion","created":1700000000,"model":"qwen3",`+
					`"choices":[{"index":0,"message":{"role":"assistant","content":"4",`+c.message+`},"finish_reason":"stop"}],`+
					`"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`)
			})
			resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "4" || resp.ReasoningContent != c.want {
				t.Fatalf("content %q, reasoning %q; want %q", resp.Content, resp.ReasoningContent, c.want)
			}
		})
	}
}

// A stream's delta.reasoning is assembled as its reasoning_content is, and
// kept apart from the content; a stream that sends both is taken by its
// reasoning_content; OpenRouter's "reasoning": null on the content's chunks
// adds nothing.
func TestReasoningFieldStreamed(t *testing.T) {
	const head = `{"id":"s","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":`
	cases := []struct {
		name   string
		deltas []string
		want   string
	}{
		{"reasoning", []string{`{"role":"assistant","content":""}`, `{"reasoning":"2+2 "}`, `{"reasoning":"is 4"}`, `{"content":"4","reasoning":null}`}, "2+2 is 4"},
		{"both", []string{`{"role":"assistant","content":""}`, `{"reasoning_content":"2+2 ","reasoning":"2+2 "}`,
			`{"reasoning_content":"is 4","reasoning":"is 4"}`, `{"content":"4"}`}, "2+2 is 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				for _, d := range c.deltas {
					sse(w, head+d+`,"finish_reason":null}]}`)
				}
				sse(w, head+`{"content":""},"finish_reason":"stop"}]}`,
					`{"id":"s","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`,
					"[DONE]")
			})
			resp, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).CompleteStream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "4" || resp.ReasoningContent != c.want || resp.Usage.CompletionTokens != 9 {
				t.Fatalf("content %q, reasoning %q (want %q), usage %+v", resp.Content, resp.ReasoningContent, c.want, resp.Usage)
			}
		})
	}
}

// A stream cut after the model's reasoning and part of its answer carried
// only the answer's part in Error.Partial, so the race estimated the cut
// attempt's output (which the provider billed, reasoning and all) without
// the reasoning. The reasoning — reasoning_content, or reasoning when that
// is what the provider sends, never both — is part of the estimate. Found by
// review (wchat3).
func TestStreamPartialCarriesTheReasoning(t *testing.T) {
	const head = `{"id":"s","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":`
	cases := []struct{ name, reasoning string }{
		{"reasoning_content", `{"reasoning_content":"let me think"}`},
		{"reasoning", `{"reasoning":"let me think"}`},
		{"both", `{"reasoning_content":"let me think","reasoning":"let me think"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, head+`{"role":"assistant","content":""},"finish_reason":null}]}`,
					head+c.reasoning+`,"finish_reason":null}]}`,
					head+`{"content":"Hel"},"finish_reason":null}]}`)
				// The body ends here: the stream is cut before its finish_reason.
			})
			_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).CompleteStream(context.Background(), testRequest(), nil)
			e := mustError(t, err)
			if e.Kind != KindStreamCut || e.Usage != nil {
				t.Fatalf("error %s (%v), usage %v; want %s without usage", e.Kind, e, e.Usage, KindStreamCut)
			}
			if e.Partial != "let me thinkHel" {
				t.Fatalf("partial %q, want %q", e.Partial, "let me thinkHel")
			}
		})
	}
}
