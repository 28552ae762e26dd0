package chat

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A tool call without "type" or "function.arguments" (go-openai drops an
// empty arguments string; a scripted or non-streaming provider may send
// neither) reaches the client as OpenAI's answers have it: openai-node's
// stream helper throws on a call without a type, and JSON.parse of a
// missing arguments fails in any client. Found by review.
func TestJudgeGivesToolCallsTheirTypeAndArguments(t *testing.T) {
	in := &Input{Tools: json.RawMessage(`[{"type":"function","function":{"name":"now"}}]`)}
	for _, tc := range []struct{ calls, wantArgs string }{
		{`[{"id":"call_1","function":{"name":"now"}}]`, "{}"},
		{`[{"id":"call_1","type":"","function":{"name":"now","arguments":""}}]`, "{}"},
		{`[{"id":"call_1","type":"function","function":{"name":"now","arguments":"{\"tz\":\"UTC\"}"}}]`, `{"tz":"UTC"}`},
	} {
		raw, bad := Judge(in, nil, "job-1", &providers.Response{ToolCalls: json.RawMessage(tc.calls), FinishReason: "tool_calls"})
		if len(bad) > 0 {
			t.Fatalf("%s: refused: %v", tc.calls, bad)
		}
		c, err := DecodeCompletion(raw)
		if err != nil {
			t.Fatal(err)
		}
		var calls []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string  `json:"name"`
				Arguments *string `json:"arguments"`
			} `json:"function"`
		}
		if err := json.Unmarshal(c.Choices[0].Message.ToolCalls, &calls); err != nil || len(calls) != 1 {
			t.Fatalf("%s: stored calls %s: %v", tc.calls, c.Choices[0].Message.ToolCalls, err)
		}
		got := calls[0]
		if got.ID != "call_1" || got.Type != "function" || got.Function.Name != "now" || got.Function.Arguments == nil || *got.Function.Arguments != tc.wantArgs {
			t.Errorf("%s: stored as %s; want type function and arguments %q", tc.calls, c.Choices[0].Message.ToolCalls, tc.wantArgs)
		}
	}
}
