package providers

import (
	"context"
	"net/http"
	"testing"
)

// A text_delta for a content block that was never started was appended to the
// answer as if it were part of it. It belongs to no block of the message: the
// stream is malformed. Found by review.
func TestAnthropicDeltaForUnstartedBlockIsMalformed(t *testing.T) {
	for name, delta := range map[string]string{
		"text":       `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"orphan "}}`,
		"tool input": `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
	} {
		evs := append([]string{anthWhole[0], delta}, anthWhole[1:]...)
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
		resp, err := p.Complete(context.Background(), testRequest())
		if err == nil {
			t.Fatalf("%s: delta for a block never started accepted: %q", name, resp.Content)
		}
		if e := mustError(t, err); e.Kind != KindStreamMalformed || e.Usage == nil || e.Usage.PromptTokens != 12 {
			t.Fatalf("%s: kind %s usage %+v, want %s with message_start's usage: %v", name, e.Kind, e.Usage, KindStreamMalformed, e)
		}
	}
}
