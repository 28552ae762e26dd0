package providers

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// Anthropic's other context-window refusal ("input length and `max_tokens`
// exceed context limit: …") is context_length_exceeded, failed over to a
// target with a larger window, like its "prompt is too long": not a plain
// bad_request that stops the job. Found by review.
func TestAnthropicContextLimitIsContextLength(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error",
		ErrorMessage: "input length and `max_tokens` exceed context limit: 197965 + 4096 > 200000, decrease input length or `max_tokens` and try again"}))
	for _, stream := range []bool{false, true} {
		_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		if e := mustError(t, err); e.Kind != KindContextLength || e.Action != ActionFailover {
			t.Errorf("stream=%v: %s/%s, want context_length_exceeded/failover", stream, e.Kind, e.Action)
		}
	}
}
