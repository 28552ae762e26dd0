package providers

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// Anthropic pauses a long-running turn (stop_reason pause_turn) and expects
// the client to send it back to continue: what came is not the whole answer.
// Neither API path may return it as a complete response — here a valid-
// looking JSON object that would pass a schema and win the race — but fails
// the attempt so the race fails over. (Found in review: pause_turn was
// mapped to finish_reason "stop".)
func TestAnthropicPauseTurnIsNotACompleteAnswer(t *testing.T) {
	paused := anthropicfake.Reply{Text: `{"category":"other"}`, StopReason: "pause_turn", InputTokens: 10, OutputTokens: 5}
	for _, stream := range []bool{false, true} {
		mode := map[bool]string{false: "Complete", true: "Complete with stream"}[stream]
		t.Run(mode, func(t *testing.T) {
			srv := anthropicfake.New(t, fixedReply(paused))
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
			resp, err := p.Complete(context.Background(), testRequest())
			if resp != nil {
				t.Fatalf("a paused turn was returned as a response (finish_reason %q, content %q)", resp.FinishReason, resp.Content)
			}
			e := assertKind(t, err, KindEmptyResponse, FaultProvider, ActionFailover, false)
			if e.Code != "pause_turn" || !e.Received {
				t.Fatalf("code %q received %v: want the stop reason as the code, and the answer received (a known outcome)", e.Code, e.Received)
			}
		})
	}
	t.Run("CompleteStream", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(paused))
		resp, err := newAnthropicAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		if resp != nil {
			t.Fatalf("a paused turn was returned as a response (finish_reason %q)", resp.FinishReason)
		}
		assertKind(t, err, KindEmptyResponse, FaultProvider, ActionFailover, false)
	})
	// The same answer ended by end_turn is complete: the test's reply is
	// otherwise one the adapter accepts.
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: paused.Text}))
	if resp, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest()); err != nil || resp.FinishReason != "stop" {
		t.Fatalf("end_turn: %v, %+v", err, resp)
	}
}
