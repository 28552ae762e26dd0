package providers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Mistral's Magistral models stream delta.content as an array of parts (a
// "thinking" part, then text), as their unstreamed message.content is. The
// unstreamed answer's parts were fixed (TestUnstreamedContentPartsAreTheAnswer),
// but the router streams from OpenAI-compatible providers by default (SPEC
// §15), and the stream decodes delta.content as a string: every Magistral
// answer is a malformed stream, failed over and counted against the breaker.
func TestStreamedContentPartsAreTheAnswer(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		startStream(w)
		const head = `{"id":"x","object":"chat.completion.chunk","created":1700000000,"model":"magistral-medium-latest","choices":[{"index":0,"delta":`
		sse(w,
			head+`{"role":"assistant","content":""},"finish_reason":null}]}`,
			head+`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"2+2 is 4"}]}]},"finish_reason":null}]}`,
			head+`{"content":[{"type":"text","text":"The answer "}]},"finish_reason":null}]}`,
			head+`{"content":"is 4."},"finish_reason":"stop"}]}`,
			`{"id":"x","object":"chat.completion.chunk","created":1700000000,"model":"magistral-medium-latest","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`,
			`[DONE]`)
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Model = "magistral-medium-latest" })
	resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatalf("a whole streamed answer with content parts failed: %v", err)
	}
	if resp.Content != "The answer is 4." {
		t.Fatalf("content %q, want the text parts joined, without the thinking", resp.Content)
	}
}

// encoding/json reports only the first type error of a chunk: a last chunk
// with content in parts and a usage count written as a float (both lenient
// decodes' causes) is read whole, whichever of the two is reported; a delta
// whose content is neither a string nor parts is still malformed.
func TestStreamedContentPartsBesideLooseUsage(t *testing.T) {
	const head = `{"id":"x","object":"chat.completion.chunk","created":1700000000,"model":"magistral-medium-latest"`
	for _, tc := range []struct {
		name, last string
		malformed  bool
	}{
		{"parts then usage", head + `,"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"is 4."}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5.0,"completion_tokens":9,"total_tokens":14}}`, false},
		{"usage then parts", `{"usage":{"prompt_tokens":5.0,"completion_tokens":9,"total_tokens":14},"id":"x","object":"chat.completion.chunk","created":1700000000,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"is 4."}]},"finish_reason":"stop"}]}`, false},
		{"content an object", head + `,"choices":[{"index":0,"delta":{"content":{"text":"is 4."}},"finish_reason":"stop"}]}`, true},
		{"parts then content an object", head + `,"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"is 4."}]},"finish_reason":null},{"index":1,"delta":{"content":7},"finish_reason":"stop"}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				startStream(w)
				sse(w,
					head+`,"choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"2+2"}]},{"type":"text","text":"The answer "}]},"finish_reason":null}]}`,
					tc.last, `[DONE]`)
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Model = "magistral-medium-latest" })
			var deltas []string
			resp, err := p.CompleteStream(context.Background(), testRequest(), func(s string) { deltas = append(deltas, s) })
			if tc.malformed {
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindStreamMalformed {
					t.Fatalf("err %v, want %s", err, KindStreamMalformed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "The answer is 4." || resp.Usage.PromptTokens != 5 || resp.Usage.CompletionTokens != 9 {
				t.Fatalf("content %q, usage %+v; want the text parts joined and the usage", resp.Content, resp.Usage)
			}
			if strings.Join(deltas, "|") != "The answer |is 4." {
				t.Fatalf("deltas %q, want the text parts as they came", deltas)
			}
		})
	}
}
