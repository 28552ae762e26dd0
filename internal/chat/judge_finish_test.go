package chat

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// finish_reason "error" (OpenRouter, Mistral) or "abort" (vLLM) says the
// generation broke off: the text is what came before the break. Judge let
// any finish reason win; it refuses those that do not say the answer is
// whole now (the adapters fail them first: this is the second line), with a
// rule that counts against the provider. Found by review.
func TestJudgeRefusesBrokenOffFinishReasons(t *testing.T) {
	for _, fr := range []string{"error", "abort", "content_filter", "insufficient_system_resource", "something_new"} {
		raw, violations := Judge(&Input{}, nil, "job-1", &providers.Response{Content: "The first half of the ans", FinishReason: fr})
		if len(violations) == 0 {
			t.Errorf("finish_reason %q: judged a winning answer: %s", fr, raw)
			continue
		}
		if v := violations[0]; v.Rule != "finish_reason" || !ProviderRule(v.Rule) {
			t.Errorf("finish_reason %q: rule %q (provider's: %v), want finish_reason, the provider's", fr, v.Rule, ProviderRule(v.Rule))
		}
	}
	for _, fr := range []string{"", "stop", "length"} {
		if _, violations := Judge(&Input{}, nil, "job-1", &providers.Response{Content: "a whole answer", FinishReason: fr}); len(violations) > 0 {
			t.Errorf("finish_reason %q refused: %v", fr, violations)
		}
	}
}

// A tool call without an id or a function name (what a stream whose
// tool-call deltas skipped an index leaves behind) cannot be run or
// answered: Judge let it win as long as it was a JSON object. Found by
// review.
func TestJudgeRefusesToolCallsWithoutIDOrName(t *testing.T) {
	offered := &Input{Tools: json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)}
	for _, calls := range []string{
		`[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}},{"type":"function","function":{"arguments":""}}]`,
		`[{"id":"","type":"function","function":{"name":"f","arguments":"{}"}}]`,
		`[{"id":"call_a","type":"function","function":{"name":"","arguments":"{}"}}]`,
		`[{"id":7,"type":"function","function":{"name":"f","arguments":"{}"}}]`,
		`[{"id":"call_a","type":"function","function":"f"}]`,
	} {
		resp := &providers.Response{ToolCalls: json.RawMessage(calls), FinishReason: "tool_calls"}
		if raw, violations := Judge(offered, nil, "job-1", resp); len(violations) == 0 || violations[0].Rule != "tool_calls" {
			t.Errorf("tool calls %s: %v, judged %s", calls, violations, raw)
		}
	}
	whole := &providers.Response{ToolCalls: json.RawMessage(`[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]`), FinishReason: "tool_calls"}
	if _, violations := Judge(offered, nil, "job-1", whole); len(violations) > 0 {
		t.Errorf("a whole tool call refused: %v", violations)
	}
}
