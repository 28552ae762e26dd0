package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A provider that keeps the connection alive with SSE comments while it
// prepares a long answer is not a malformed stream, however many comments
// come before the first chunk: go-openai's default limit (300 lines without
// data, so 150 comments with their blank lines) failed it as
// stream_malformed. Found by review.
func TestOpenAIStreamTakesManyKeepalivesBeforeData(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		_, _ = w.Write([]byte(strings.Repeat(": keepalive\n\n", 400)))
		sse(w, chunk("hello", ""), chunk("", "stop"), "[DONE]")
	})
	p := newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.Stream = true })
	resp, err := p.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatalf("400 keepalive comments before the stream's data: %v", err)
	}
	if resp.Content != "hello" || resp.FinishReason != "stop" {
		t.Fatalf("got %q (%s), want hello (stop)", resp.Content, resp.FinishReason)
	}
}
