package providers

import (
	"context"
	"net/http"
	"testing"
)

// Anthropic sends one message_start per stream. A second one in the middle of
// a stream was accepted: the two messages' texts were joined into one answer
// and the usage billed at the first (input 500 tokens) was replaced by the
// second's (3). It is a malformed stream, billed with the first start's
// usage. Found by review.
func TestAnthropicSecondMessageStartIsMalformed(t *testing.T) {
	evs := []string{
		`{"type":"message_start","message":{"id":"msg_a","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":500,"cache_read_input_tokens":0,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"first answer, "}}`,
		`{"type":"message_start","message":{"id":"msg_b","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"second answer"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`,
		`{"type":"message_stop"}`,
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	resp, err := p.Complete(context.Background(), testRequest())
	if err == nil {
		t.Fatalf("a stream with two message_start events was accepted as one answer: content %q id %q usage %+v", resp.Content, resp.ResponseID, resp.Usage)
	}
	e := mustError(t, err)
	if e.Kind != KindStreamMalformed {
		t.Fatalf("kind %s, want %s: %v", e.Kind, KindStreamMalformed, e)
	}
	if e.Usage == nil || e.Usage.PromptTokens != 500 || e.ResponseID != "msg_a" {
		t.Fatalf("usage %+v id %q: want the first message_start's (500 input tokens, msg_a)", e.Usage, e.ResponseID)
	}
}
