package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A caller that sends stop sequences can get an empty answer: stop: ["OK"]
// and "Answer with the word OK only", or stop: ["\n"] and a model that
// begins with a new line. OpenAI answers it 200 with content "" and
// finish_reason "stop". Judge refused it with the rule "empty", which
// ProviderRule counts against the target's breaker: the caller got 502 and
// one tenant's stop sequence opened a route's breakers for every tenant. It is
// accepted now, as OpenAI answers it. Found by review.
func TestJudgeAcceptsAnEmptyAnswerAtTheCallersStop(t *testing.T) {
	in := &Input{Messages: []providers.Message{{Role: "user", Content: "Answer with the word OK only."}}, Stop: []string{"OK"}}
	for _, fr := range []string{"stop", ""} {
		for _, content := range []string{"", " \n"} {
			resp := &providers.Response{Content: content, FinishReason: fr, Model: "gpt-4o-mini",
				Usage: providers.Usage{PromptTokens: 9, CompletionTokens: 1, TotalTokens: 10}}
			raw, violations := Judge(in, nil, "01a238f0-dcd8-7d52-924d-2d589cb4ac7f", resp)
			if len(violations) > 0 {
				t.Fatalf("answer %q, finish_reason %q, with the caller's stop: refused (rule %q, the provider's: %v): %s",
					content, fr, violations[0].Rule, ProviderRule(violations[0].Rule), violations[0].Message)
			}
			c, err := DecodeCompletion(raw)
			if err != nil {
				t.Fatal(err)
			}
			if ch := c.Choices[0]; ch.Message.Content == nil || *ch.Message.Content != content || ch.Message.ToolCalls != nil || ch.FinishReason != "stop" {
				t.Errorf("completion %s: want content %q and finish_reason \"stop\", as OpenAI answers", raw, content)
			}
		}
	}
}

// Without stop sequences an empty answer that says it is whole is still the
// provider's failure (the race fails over and the target's breaker counts
// it); stop sequences change nothing else Judge decides.
func TestJudgeEmptyAnswerWithoutStopIsStillTheProviders(t *testing.T) {
	for _, stop := range [][]string{nil, {}} {
		in := &Input{Messages: []providers.Message{{Role: "user", Content: "hi"}}, Stop: stop}
		for _, fr := range []string{"stop", ""} {
			if _, v := Judge(in, nil, "j", &providers.Response{Content: "", FinishReason: fr}); len(v) == 0 || v[0].Rule != "empty" || !ProviderRule(v[0].Rule) {
				t.Errorf("stop %q, empty answer with finish_reason %q: %v, want the provider's rule \"empty\"", stop, fr, v)
			}
		}
	}
	withStop := &Input{Messages: []providers.Message{{Role: "user", Content: "hi"}}, Stop: []string{"\n"}}
	// tool_calls announced and none sent is still the provider's fault.
	for _, fr := range []string{"tool_calls", "function_call"} {
		if _, v := Judge(withStop, nil, "j", &providers.Response{Content: "", FinishReason: fr}); len(v) == 0 || v[0].Rule != "tool_calls" || !ProviderRule(v[0].Rule) {
			t.Errorf("stop, empty answer with finish_reason %s and no call: %v, want the provider's rule \"tool_calls\"", fr, v)
		}
	}
	// A finish reason that does not say the answer is whole is refused.
	if _, v := Judge(withStop, nil, "j", &providers.Response{Content: "", FinishReason: "error"}); len(v) == 0 || v[0].Rule != "finish_reason" {
		t.Errorf("stop, empty answer with finish_reason error: %v, want the rule \"finish_reason\"", v)
	}
	// With a response_format the empty answer misses the caller's own
	// format: refused, not counted against the target's breaker.
	object := &Input{Messages: withStop.Messages, Stop: withStop.Stop, ResponseFormat: &ResponseFormat{Type: "json_object"}}
	if _, v := Judge(object, nil, "j", &providers.Response{Content: "", FinishReason: "stop"}); len(v) == 0 || ProviderRule(v[0].Rule) {
		t.Errorf("stop and json_object, empty answer: %v, want it refused as the caller's format", v)
	}
	// Tool calls with no text win as before.
	tools := &Input{Messages: withStop.Messages, Stop: withStop.Stop, Tools: json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)}
	raw, v := Judge(tools, nil, "j", &providers.Response{FinishReason: "tool_calls",
		ToolCalls: json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]`)})
	if len(v) > 0 {
		t.Fatalf("stop, tool calls: refused: %v", v)
	}
	if c, err := DecodeCompletion(raw); err != nil || c.Choices[0].Message.Content != nil || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("stop, tool calls: completion %s (%v), want content null and finish_reason tool_calls", raw, err)
	}
}

// The Anthropic adapter applies whitespace-only stop sequences itself
// (Anthropic refuses them), streamed or not: an answer that begins with one
// is cut to "" with finish "stop" by the router's own adapter, and must win
// as OpenAI would answer it rather than be blamed on the provider.
func TestJudgeAcceptsAnAnswerTheAnthropicAdapterCutToNothing(t *testing.T) {
	srv := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
		return anthropicfake.Reply{Text: "\nOK", ToolName: "f", ToolInput: `{}`, StopReason: "tool_use", InputTokens: 9, OutputTokens: 4}
	})
	in := &Input{Messages: []providers.Message{{Role: "user", Content: "hi"}}, Stop: []string{"\n"},
		Tools: json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			p, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "claude", BaseURL: srv.URL, APIKey: "sk-ant-test", Model: "claude-test", Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Complete(context.Background(), &providers.Request{Model: "claude-test", Messages: in.Messages, Stop: in.Stop, Tools: in.Tools})
			if err != nil {
				t.Fatal(err)
			}
			raw, v := Judge(in, nil, "j", resp)
			if len(v) > 0 {
				t.Fatalf("the adapter's cut (content %q, finish %q) refused: rule %q (the provider's: %v): %s",
					resp.Content, resp.FinishReason, v[0].Rule, ProviderRule(v[0].Rule), v[0].Message)
			}
			c, err := DecodeCompletion(raw)
			if err != nil {
				t.Fatal(err)
			}
			if ch := c.Choices[0]; ch.Message.Content == nil || *ch.Message.Content != "" || ch.Message.ToolCalls != nil || ch.FinishReason != "stop" {
				t.Errorf("completion %s: want content \"\", no tool call (the model stopped before it), finish_reason \"stop\"", raw)
			}
		})
	}
}
