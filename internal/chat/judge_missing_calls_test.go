package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
)

// An answer that ended with finish_reason tool_calls (or the deprecated
// function_call) and holds no tool call — vLLM's, when its tool parser fails
// on the model's text and leaves the call in the content — was judged valid
// and stored: callers that branch on finish_reason "tool_calls" then ran a
// null tool_calls. It is refused now, whatever its text and response_format,
// as the provider's fault (the race fails over), and never turned into a
// "stop". Found by review.
func TestJudgeRefusesToolCallFinishWithoutCalls(t *testing.T) {
	offered := json.RawMessage(`[{"type":"function","function":{"name":"get_weather"}}]`)
	plain := &Input{Tools: offered}
	schema := &Input{Tools: offered, ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "r",
		Schema: json.RawMessage(`{"type":"object"}`)}}}
	v, err := schema.Validator()
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range []string{"tool_calls", "function_call"} {
		for _, c := range []struct {
			name string
			in   *Input
			v    *contract.Validator
			resp *providers.Response
		}{
			{"unparsed call in the text", plain, nil, &providers.Response{
				Content: `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`, FinishReason: fr}},
			{"no text", plain, nil, &providers.Response{FinishReason: fr}},
			{"null calls", plain, nil, &providers.Response{Content: "Let me look.", ToolCalls: json.RawMessage(`null`), FinishReason: fr}},
			{"no tools offered", &Input{}, nil, &providers.Response{Content: "Sunny.", FinishReason: fr}},
			{"text the schema accepts", schema, v, &providers.Response{Content: `{"name": "get_weather"}`, FinishReason: fr}},
		} {
			raw, violations := Judge(c.in, c.v, "job-1", c.resp)
			if len(violations) == 0 {
				t.Errorf("%s, %s: judged a winning answer: %s", fr, c.name, raw)
				continue
			}
			got := violations[0]
			if got.Rule != "tool_calls" || !ProviderRule(got.Rule) || !strings.Contains(got.Message, "finish_reason "+fr+" but sent no tool call") {
				t.Errorf("%s, %s: %+v, want rule tool_calls (the provider's) naming the finish reason", fr, c.name, got)
			}
		}
	}
	// The same text with a finish reason that calls nothing still wins.
	if _, violations := Judge(plain, nil, "job-1", &providers.Response{Content: "Sunny.", FinishReason: "stop"}); len(violations) > 0 {
		t.Errorf("a text answer refused: %v", violations)
	}
}
