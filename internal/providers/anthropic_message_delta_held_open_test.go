package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// An Anthropic stream whose message_delta (stop_reason and final usage)
// came but not message_stop, held open without another byte, is not taken
// for a whole message: message_stop is the Messages API's end, and a stream
// broken between the two is cut (TestStreamBrokenBeforeItsEndIsCut), so one
// falling silent there is stalled, failed over with the usage
// message_delta reported (billed, not estimated), as docs/providers.md
// says. Pinned by the review of wstream9; the OpenAI-compatible stream's
// finish_reason and usage chunk end the answer, Anthropic's do not.
func TestAnthropicMessageDeltaThenHeldOpenIsStalled(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		anthSSE(w, anthWhole[:len(anthWhole)-1]...) // all but message_stop
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) {
		c.Stream, c.Timeout, c.StreamIdleTimeout = true, time.Hour, 300*time.Millisecond
	})
	resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
	if err == nil {
		t.Fatalf("returned %q as whole without message_stop", resp.Content)
	}
	e := mustError(t, err)
	if e.Kind != KindStreamStalled || !e.Received {
		t.Fatalf("%s received %v (%v), want stream_stalled received", e.Kind, e.Received, err)
	}
	if e.Usage == nil || e.Usage.PromptTokens != 12 || e.Usage.CompletionTokens != 7 {
		t.Fatalf("usage %+v, want message_delta's 12 in, 7 out", e.Usage)
	}
}
