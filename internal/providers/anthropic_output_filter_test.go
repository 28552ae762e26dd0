package providers

import (
	"context"
	"net/http"
	"testing"
)

// Anthropic's output filter refuses with invalid_request_error "Output
// blocked by content filtering policy" — an HTTP 400, or an error event in
// the stream after part of the answer. It is a content-policy refusal
// (SPEC §6.3: propagated unless the route's failover_on_content_policy says
// to fail over), but was classified as a plain bad_request, which that route
// setting never fails over. Found by review.
func TestAnthropicOutputFilterIsContentPolicy(t *testing.T) {
	const msg = "Output blocked by content filtering policy"
	status := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthReal400(w, msg) })
	event := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		anthSSE(w,
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Sure, here is"}}`,
			`{"type":"error","error":{"details":null,"type":"invalid_request_error","message":"`+msg+`"}}`)
	})
	for name, url := range map[string]string{"400": status.URL, "error event": event.URL} {
		p := newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.Stream = name == "error event" })
		_, err := p.Complete(context.Background(), testRequest())
		if pe, _ := AsError(err); pe == nil || pe.Kind != KindContentPolicy {
			t.Errorf("%s: got %v, want content_policy", name, err)
		}
	}
}
