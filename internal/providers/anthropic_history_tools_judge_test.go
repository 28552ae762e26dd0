package providers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// The tools the Anthropic adapter declares for a tool history in a request
// that offers none (with tool_choice none) are never the caller's: should a
// provider call one anyway, the adapter returns the call, and chat's Judge
// refuses it as the provider's fault (the race fails over) — the caller,
// which offered no tools, never receives a tool call.
func TestAnthropicHistoryToolCalledAnywayIsRefused(t *testing.T) {
	srv := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
		return anthropicfake.Reply{ToolName: "weather", ToolInput: `{"city":"Paris"}`, StopReason: "tool_use", InputTokens: 30, OutputTokens: 6}
	})
	req := &providers.Request{Messages: []providers.Message{
		{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{}"}}]`)},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"},
		{Role: "user", Content: "And tomorrow?"},
	}}
	for _, stream := range []bool{false, true} {
		p, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "claude", BaseURL: srv.URL, APIKey: "sk-ant-test", Model: "claude-test", Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		_, violations := chat.Judge(&chat.Input{}, nil, "job", resp)
		if len(violations) == 0 || violations[0].Rule != "tool_calls" || !chat.ProviderRule(violations[0].Rule) {
			t.Errorf("stream=%v: a call to a tool the request did not offer was judged %v, want the provider's tool_calls violation", stream, violations)
		}
	}
}
