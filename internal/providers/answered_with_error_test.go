package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// A 200 stream whose first event is the provider's error (Anthropic's
// overloaded_error or api_error before message_start) is the provider
// refusing the request, as an error status is: nothing was billed. The race
// took it for an answer cut after the provider began (Received, no status,
// no usage) and estimated the prompt as billed, giving the attempt a cost
// the provider never charged. The error is marked AnsweredWithError now; one
// after message_start cut a message that had begun, so it is not marked and
// carries the usage message_start reported (review ranth8: marked, a server
// that reports no input there had nothing estimated), and a stream that
// merely breaks off is not marked. Found by review.
func TestAnthropicErrorEventIsAnsweredWithError(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_e","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":1}}}`
	cases := []struct {
		name   string
		events []string
		kind   Kind
		marked bool
		usage  bool
	}{
		{"overloaded before message_start", []string{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, KindUnavailable, true, false},
		{"api_error before message_start", []string{`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`}, KindServerError, true, false},
		{"overloaded after message_start", []string{start, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, KindUnavailable, false, true},
		{"cut before message_start", nil, KindStreamCut, false, false},
		{"cut after message_start", []string{start}, KindStreamCut, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				anthSSE(w, c.events...)
			})
			_, err := newAnthropicAdapter(t, srv.URL, func(a *AnthropicConfig) { a.Stream = true }).Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != c.kind || e.AnsweredWithError != c.marked || !e.Received || e.StatusCode != 0 {
				t.Fatalf("%s (HTTP %d) answered with error %v, received %v; want %s, answered with error %v, received",
					e.Kind, e.StatusCode, e.AnsweredWithError, e.Received, c.kind, c.marked)
			}
			if (e.Usage != nil) != c.usage {
				t.Fatalf("usage %v, want it only after message_start", e.Usage)
			}
		})
	}
}

// The OpenAI-compatible adapter had the same: an error line (`data:
// {"error": …}`, an object or text) or an error chunk (OpenRouter's) in
// place of the first chunk of a 200 stream got the prompt estimated as
// billed. It is marked AnsweredWithError; after a chunk of the answer it is
// not (the provider had begun answering, and reports usage only at the
// end, so the prompt is estimated as for a cut stream).
func TestOpenAIStreamErrorIsAnsweredWithError(t *testing.T) {
	events := map[string]string{
		"error object": `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`,
		"error text":   `{"error":"Model is overloaded","error_type":"overloaded"}`,
		"error chunk": `{"id":"gen-1","object":"chat.completion.chunk","created":1700000001,"model":"m","choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],` +
			`"error":{"code":502,"message":"Provider disconnected unexpectedly"}}`,
	}
	for name, ev := range events {
		for _, afterChunk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s after a chunk %v", name, afterChunk), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					startStream(w)
					if afterChunk {
						sse(w, chunk("half", ""))
					}
					sse(w, ev)
				})
				_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
				e := mustError(t, err)
				if e.AnsweredWithError == afterChunk || !e.Received || e.StatusCode != 0 || e.Usage != nil {
					t.Fatalf("%s (HTTP %d) %q: answered with error %v, received %v, usage %v; want answered with error %v",
						e.Kind, e.StatusCode, e.Message, e.AnsweredWithError, e.Received, e.Usage, !afterChunk)
				}
			})
		}
	}
}
