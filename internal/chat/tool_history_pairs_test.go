package chat

import (
	"errors"
	"strings"
	"testing"
)

// An assistant turn whose call no tool message answered was stored as a job
// that OpenAI ("An assistant message with 'tool_calls' must be followed by
// tool messages responding to each 'tool_call_id'") and Anthropic (a tool_use
// without its tool_result) refuse on every attempt, binding the key. It is
// refused with a 400 naming the call: when a message other than a tool
// message comes first, when the history ends, and when the answer comes only
// after another message. Found by review.
func TestNormalizeRefusesUnansweredToolCall(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"weather"}}]`
	const call1, call2 = `{"id":"c1","type":"function","function":{"name":"weather","arguments":"{}"}}`,
		`{"id":"c2","type":"function","function":{"name":"weather","arguments":"{}"}}`
	for _, c := range []struct{ messages, param, says string }{
		{`{"role":"user","content":"Paris and Rome?"},{"role":"assistant","content":null,"tool_calls":[` + call1 + `,` + call2 + `]},` +
			`{"role":"tool","tool_call_id":"c1","content":"sunny"},{"role":"user","content":"so?"}`, "messages[1].tool_calls[1].id", `"c2"`},
		{`{"role":"user","content":"Paris and Rome?"},{"role":"assistant","content":null,"tool_calls":[` + call1 + `,` + call2 + `]},` +
			`{"role":"tool","tool_call_id":"c2","content":"rain"}`, "messages[1].tool_calls[0].id", `"c1"`},
		{`{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[` + call1 + `]}`, "messages[1].tool_calls[0].id", `"c1"`},
		{`{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[` + call1 + `]},` +
			`{"role":"user","content":"hurry"},{"role":"tool","tool_call_id":"c1","content":"sunny"}`, "messages[1].tool_calls[0].id", `"c1"`},
		{`{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[` + call1 + `]},` +
			`{"role":"tool","tool_call_id":"c1","content":"sunny"},{"role":"assistant","content":"Sunny."},{"role":"tool","tool_call_id":"c1","content":"sunny"}`,
			"messages[4].tool_call_id", "answers no tool call"},
	} {
		_, err := parse(t, `{"model":"m",`+tools+`,"messages":[`+c.messages+`]}`).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("%s:\nNormalize = %v (param %q); want a 400 on %s naming %s", c.messages, err, paramOf(re), c.param, c.says)
		}
	}
	for _, ok := range []string{
		// Parallel calls answered out of order, then a second turn.
		`{"role":"user","content":"Paris and Rome?"},{"role":"assistant","content":null,"tool_calls":[` + call1 + `,` + call2 + `]},` +
			`{"role":"tool","tool_call_id":"c2","content":"rain"},{"role":"tool","tool_call_id":"c1","content":"sunny"},` +
			`{"role":"assistant","content":"","tool_calls":[{"id":"c3","type":"function","function":{"name":"weather"}}]},` +
			`{"role":"tool","tool_call_id":"c3","content":"fog"},{"role":"assistant","content":"Done."},{"role":"user","content":"thanks"}`,
	} {
		if _, err := parse(t, `{"model":"m",`+tools+`,"messages":[`+ok+`]}`).Normalize(); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}

// Arguments that are not JSON passed Normalize, and the Anthropic adapter
// refused them on every attempt at every Anthropic target ("function.arguments
// is not JSON"), binding the key. They are refused with a 400 on the field;
// blank arguments (sent as {}) and JSON are kept. Found by review.
func TestNormalizeRefusesArgumentsThatAreNotJSON(t *testing.T) {
	for _, args := range []string{`"{city: Paris"`, `"Paris"`, `"{\"city\":\"Paris\"} x"`, `"{\"city\":\"Par\u0022is\"}"`} {
		body := historyBody(`[{"id":"c1","type":"function","function":{"name":"weather","arguments":` + args + `}}]`)
		_, err := parse(t, body).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != "messages[1].tool_calls[0].function.arguments" || !strings.Contains(re.Message, "not JSON") {
			t.Errorf("arguments %s: Normalize = %v; want a 400 on messages[1].tool_calls[0].function.arguments (not JSON)", args, err)
		}
	}
	for _, args := range []string{`""`, `" "`, `"{}"`, `" {\"city\":\"Paris\"}\n"`, `"[1,2]"`, `"{\"city\":\"\\u00e9\"}"`, `"{\"q\":\"a\\\"b\"}"`} {
		body := historyBody(`[{"id":"c1","type":"function","function":{"name":"weather","arguments":` + args + `}}]`)
		if _, err := parse(t, body).Normalize(); err != nil {
			t.Errorf("arguments %s refused: %v", args, err)
		}
	}
}
