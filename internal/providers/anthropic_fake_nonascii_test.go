package providers

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// The fake split the text (and a tool's input) at a byte index: a multi-byte
// character cut in two was written as two U+FFFD by json.Marshal, so the fake
// streamed text that was not what it was told to answer (real Anthropic never
// splits a character across deltas). Found by review.
func TestAnthropicFakeStreamsNonASCIIWhole(t *testing.T) {
	const text = "ééé"          // 6 bytes: the middle (3) falls inside the second é
	const input = `{"k":"ééé"}` // 14 bytes: the middle (7) falls inside the first é
	srv := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
		return anthropicfake.Reply{Text: text, ToolName: "weather", ToolInput: input, InputTokens: 3, OutputTokens: 4}
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	resp, err := p.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != text {
		t.Fatalf("fake streamed %q, want %q", resp.Content, text)
	}
	want := `[{"id":"toolu_fake1","type":"function","function":{"name":"weather","arguments":"{\"k\":\"ééé\"}"}}]`
	if string(resp.ToolCalls) != want {
		t.Fatalf("tool calls %s, want %s", resp.ToolCalls, want)
	}
}
