package providers

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// Anthropic refuses stop sequences that are only whitespace (a 400 that
// would fail the job as the caller's fault), and "\n" is among the
// commonest stops: they are not sent, and the adapter cuts the answer at the
// first of them instead, as the model would have stopped — streamed or not.
func TestAnthropicWhitespaceStopsAppliedByTheAdapter(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "first line END? no\nsecond line",
			ToolName: "weather", ToolInput: `{"city":"Paris"}`, StopReason: "tool_use", InputTokens: 3, OutputTokens: 9}))
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		req := testRequest()
		req.Stop = []string{"\n", "STOP", " \t"}
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if resp.Content != "first line END? no" || resp.FinishReason != "stop" || resp.ToolCalls != nil || resp.Usage.CompletionTokens != 9 {
			t.Errorf("stream=%v: content %q finish %q tool calls %s usage %+v; want the text cut at the newline, stop, no tool call, the billed usage",
				stream, resp.Content, resp.FinishReason, resp.ToolCalls, resp.Usage)
		}
		rs := srv.Requests()
		if got := rs[len(rs)-1].Body["stop_sequences"]; len(got.([]any)) != 1 || got.([]any)[0] != "STOP" {
			t.Errorf("stream=%v: sent stop_sequences %v, want only [STOP]", stream, got)
		}
	}
	// Without a match the answer is untouched.
	r := &Response{Content: "one line", FinishReason: "length"}
	cutAtStops(r, []string{"\n"})
	if r.Content != "one line" || r.FinishReason != "length" {
		t.Errorf("no match: %+v", r)
	}
}
