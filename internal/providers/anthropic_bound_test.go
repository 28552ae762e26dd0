package providers

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// An Anthropic body or stream larger than MaxResponseBytes fails the call
// with response_too_large (fail over), as for OpenAI-compatible providers
// (SPEC §17: a provider's response body and stream are bounded), and an
// error body past it is classified by its status; an answer under the limit
// is read whole.
func TestAnthropicResponseBound(t *testing.T) {
	const limit = 4096
	big := strings.Repeat("x", 2*limit)
	for _, stream := range []bool{false, true} {
		mode := map[bool]string{false: "/complete", true: "/stream"}[stream]
		t.Run("answer"+mode, func(t *testing.T) {
			srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: big, InputTokens: 1, OutputTokens: 1}))
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream, c.MaxResponseBytes = stream, limit })
			resp, err := p.Complete(context.Background(), testRequest())
			if resp != nil {
				t.Fatalf("an over-limit answer returned a response of %d bytes", len(resp.Content))
			}
			if e := assertKind(t, err, KindResponseTooLarge, FaultProvider, ActionFailover, false); !e.Received {
				t.Fatal("response_too_large is not marked Received")
			}
		})
		t.Run("error body"+mode, func(t *testing.T) {
			srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Status: 500, ErrorType: "api_error", ErrorMessage: big}))
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream, c.MaxResponseBytes = stream, limit })
			_, err := p.Complete(context.Background(), testRequest())
			// Classified by its status, not as an answer too large
			// (oversized_error_body_test.go).
			if e := assertKind(t, err, KindServerError, FaultProvider, ActionRetry, false); e.StatusCode != 500 || e.Received {
				t.Fatalf("HTTP %d received %v, want HTTP 500 not received", e.StatusCode, e.Received)
			}
		})
		t.Run("under the limit"+mode, func(t *testing.T) {
			srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hello", InputTokens: 1, OutputTokens: 1}))
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream, c.MaxResponseBytes = stream, limit })
			resp, err := p.Complete(context.Background(), testRequest())
			if err != nil || resp.Content != "hello" {
				t.Fatalf("%+v, %v", resp, err)
			}
		})
	}
	t.Run("default bound", func(t *testing.T) {
		huge := strings.Repeat("y", int(DefaultMaxResponseBytes)+1)
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: huge, InputTokens: 1, OutputTokens: 1}))
		p := newAnthropicAdapter(t, srv.URL, nil)
		resp, err := p.Complete(context.Background(), testRequest())
		if resp != nil {
			t.Fatal("an answer past DefaultMaxResponseBytes was read whole")
		}
		assertKind(t, err, KindResponseTooLarge, FaultProvider, ActionFailover, false)
	})
	t.Run("negative limit refused", func(t *testing.T) {
		if _, err := NewAnthropic(AnthropicConfig{Name: "x", MaxResponseBytes: -1}); err == nil {
			t.Fatal("a negative MaxResponseBytes was accepted")
		}
	})
}
