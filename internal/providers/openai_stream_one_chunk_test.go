package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A one-chunk answer (vLLM and TGI send the last token with its
// finish_reason; a label, "Yes", {"a":1}) followed by its usage chunk, from a
// gateway that then holds the body open, is whole at the usage chunk as any
// answer is: the [DONE] rule for finish_reason on every chunk had it fail as
// stream_timeout, its answer billed, and the job fail over. Found by review.
// The price, chosen: a Gemini-style stream (finish_reason on every chunk)
// cut right after its first chunk and a usage chunk is taken as whole too;
// one whose content goes on after its usage chunk still waits for [DONE].
func TestOpenAIOneChunkAnswerWholeAfterUsageChunk(t *testing.T) {
	for name, keepAlive := range map[string]string{"silent": "", "keep-alives": ": keep-alive\n\n"} {
		t.Run(name, func(t *testing.T) {
			url, _ := holdAfter(t, func(w http.ResponseWriter) {
				startStream(w)
				sse(w, chunk(`{"a":1}`, "stop"), usageChunk)
			}, keepAlive)
			p := newTestAdapter(t, url, func(c *OpenAIConfig) {
				c.StreamIdleTimeout = time.Hour
				c.Timeout = time.Second
			})
			resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatalf("a one-chunk answer followed by its usage chunk failed: %v", err)
			}
			if resp.Content != `{"a":1}` {
				t.Fatalf("response %+v", resp)
			}
		})
	}
}
