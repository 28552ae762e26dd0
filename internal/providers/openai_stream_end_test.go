package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// usageChunk is the last chunk of a stream asked for with include_usage (as
// the adapter always asks): no choices, the usage of the whole answer.
const usageChunk = `{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test-0613","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`

// A gateway that keeps the connection open after the usage chunk, with no
// [DONE] and no end of the body: the answer is whole, and when the idle
// deadline passes it is returned with the usage reported, not discarded as
// stream_stalled (a whole, billed answer thrown away and paid for again
// elsewhere). Found by review.
func TestOpenAIStreamHeldOpenAfterUsageIsWhole(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w, chunk(`{"a":`, ""), chunk(`1}`, ""), chunk("", "stop"), usageChunk)
		<-r.Context().Done()
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.StreamIdleTimeout = 300 * time.Millisecond; c.Timeout = 30 * time.Second })
	var deltas string
	resp, err := p.CompleteStream(context.Background(), testRequest(), func(s string) { deltas += s })
	if err != nil {
		t.Fatalf("a whole answer failed: %v", err)
	}
	if resp.Content != `{"a":1}` || deltas != `{"a":1}` || resp.FinishReason != "stop" || resp.ResponseID != "chatcmpl-s" {
		t.Fatalf("response %+v, deltas %q", resp, deltas)
	}
	if resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 5 || resp.Usage.Estimated {
		t.Fatalf("usage %+v, want the 11 prompt and 5 completion tokens reported", resp.Usage)
	}
}

// A stream is read to its [DONE], not cut at the usage chunk: a body closed
// unread closes an HTTP/1.1 connection (a local vLLM or Ollama over plain
// HTTP) instead of returning it to the pool, so every call would dial anew.
// The provider here flushes [DONE] a moment after the usage chunk, as a
// provider on a network does.
func TestOpenAIStreamKeepsItsConnection(t *testing.T) {
	keepsOneConnection(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w, chunk(`{"a":1}`, ""), chunk("", "stop"), usageChunk)
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond) // the provider's network, not a synchronisation
		fmt.Fprint(w, "data: [DONE]\n\n")
	}, func(url string) Streamer { return newTestAdapter(t, url, nil) })
}

// The second line of defence: a server that ignores include_usage and leaves
// the connection open after the finish_reason. The answer is whole at its
// finish_reason; only the usage chunk could still come. When the idle
// deadline passes there, the answer is returned with no usage (as a stream
// that ends after its finish_reason without a usage chunk is), not failed as
// stream_stalled.
func TestOpenAIStreamStalledAfterFinishReasonIsWhole(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w, chunk(`{"a":1}`, ""), chunk("", "stop"))
		<-r.Context().Done()
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.StreamIdleTimeout = 200 * time.Millisecond })
	resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatalf("a whole answer failed: %v", err)
	}
	if resp.Content != `{"a":1}` || resp.FinishReason != "stop" || resp.Usage != (Usage{}) {
		t.Fatalf("response %+v", resp)
	}
}

// What the second line of defence must not excuse: a stall before the
// finish_reason (the answer is not whole), and one after a finish_reason
// that says the answer broke off, which stays the failure it is.
func TestOpenAIStreamStalledBeforeFinishReasonFails(t *testing.T) {
	for name, events := range map[string][]string{
		"no finish_reason":    {chunk(`{"a":1}`, "")},
		"finish_reason error": {chunk(`{"a":`, ""), chunk("", "error")},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				startStream(w)
				sse(w, events...)
				<-r.Context().Done()
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.StreamIdleTimeout = 200 * time.Millisecond })
			resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
			if resp != nil {
				t.Fatalf("a response %+v from a stream that is not whole", resp)
			}
			want := KindStreamStalled
			if name == "finish_reason error" {
				want = KindStreamCut
			}
			if e, _ := AsError(err); e == nil || e.Kind != want || !e.Received {
				t.Fatalf("error %v, want %s with Received", err, want)
			}
		})
	}
}
