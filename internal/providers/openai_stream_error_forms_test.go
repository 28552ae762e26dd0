package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Two servers' ways of reporting an error inside a 200 stream were lost and
// read as a cut stream (stream_cut, the provider's fault, the provider's
// reason gone): llama.cpp's SSE field `error: {…}`, and vLLM's (older
// versions, forks) chunk that is itself an error object, {"object":"error",
// …}. A context-length refusal then counted against a healthy target's
// breaker. Each is now classified as the error it reports. Found by review.
func TestStreamErrorFormsAreClassified(t *testing.T) {
	const llama = `error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}`
	const vllm = `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens. Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`
	for _, c := range []struct {
		name  string
		write func(w http.ResponseWriter)
	}{
		{"llama.cpp error field after a chunk", func(w http.ResponseWriter) {
			sse(w, chunk("Hello", ""))
			fmt.Fprint(w, llama+"\n\n")
		}},
		{"llama.cpp error field first", func(w http.ResponseWriter) { fmt.Fprint(w, llama+"\n\n") }},
		{"vLLM error object after a chunk", func(w http.ResponseWriter) { sse(w, chunk("Hello", ""), vllm, "[DONE]") }},
		{"vLLM error object first", func(w http.ResponseWriter) { sse(w, vllm, "[DONE]") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				startStream(w)
				c.write(w)
			})
			p := newTestAdapter(t, srv.URL, nil)
			_, err := p.CompleteStream(context.Background(), testRequest(), nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err %v, want a classified provider error", err)
			}
			if e.Kind != KindContextLength || !strings.Contains(e.Message, "context") {
				t.Fatalf("kind %s, message %q; want context_length with the provider's reason", e.Kind, e.Message)
			}
		})
	}
}
