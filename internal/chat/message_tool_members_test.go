package chat

import (
	"errors"
	"strings"
	"testing"
)

// tool_calls and tool_call_id belong to assistant and tool messages only.
// OpenAI refuses them on any other role ("Additional properties are not
// allowed ('tool_call_id' was unexpected)"), and the Anthropic adapter drops
// a user message's tool_calls, so the tool message after it is a tool_result
// with no tool_use (Anthropic 400). Normalize refuses them before a job is
// stored. Found by review.
func TestNormalizeRefusesToolMembersOnWrongRole(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"weather"}}]`
	const call = `{"id":"c1","type":"function","function":{"name":"weather","arguments":"{}"}}`
	for _, c := range []struct{ messages, param string }{
		// a user message "calling" a tool, answered by a tool message
		{`{"role":"user","content":"Paris?","tool_calls":[` + call + `]},{"role":"tool","tool_call_id":"c1","content":"sunny"}`,
			"messages[0].tool_calls"},
		// a system message with tool_calls
		{`{"role":"system","content":"be brief","tool_calls":[` + call + `]},{"role":"tool","tool_call_id":"c1","content":"sunny"},{"role":"user","content":"hi"}`,
			"messages[0].tool_calls"},
		// a tool message carrying tool_calls of its own
		{`{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[` + call + `]},` +
			`{"role":"tool","tool_call_id":"c1","content":"sunny","tool_calls":[{"id":"c9","type":"function","function":{"name":"weather","arguments":"{}"}}]}`,
			"messages[2].tool_calls"},
		// tool_calls that are not even an array, on a user message
		{`{"role":"user","content":"Paris?","tool_calls":"weather"}`, "messages[0].tool_calls"},
		// tool_call_id on a user message
		{`{"role":"user","content":"Paris?","tool_call_id":"c1"}`, "messages[0].tool_call_id"},
		// tool_call_id on an assistant message
		{`{"role":"user","content":"Paris?"},{"role":"assistant","content":"sunny","tool_call_id":"c1"}`, "messages[1].tool_call_id"},
	} {
		in, err := parse(t, `{"model":"m",`+tools+`,"messages":[`+c.messages+`]}`).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != c.param {
			stored := ""
			if in != nil {
				for i, m := range in.Messages {
					if len(m.ToolCalls) > 0 || (m.ToolCallID != "" && m.Role != "tool") {
						stored += " " + m.Role + "@" + string(rune('0'+i))
					}
				}
			}
			t.Errorf("%s\nNormalize = %v; want a 400 on %s (stored tool members on:%s)", c.messages, err, c.param, stored)
			continue
		}
		if !strings.Contains(re.Message, "only a") {
			t.Errorf("%s: message %q does not say which role may carry it", c.messages, re.Message)
		}
	}
	// What carries no call is not refused: an empty array (as an assistant's
	// means no calls, and is not forwarded), null, and an empty id.
	for _, messages := range []string{
		`{"role":"user","content":"hi","tool_calls":[]}`,
		`{"role":"system","content":"be brief","tool_calls":null},{"role":"user","content":"hi","tool_call_id":""}`,
		`{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[` + call + `]},{"role":"tool","tool_call_id":"c1","content":"sunny","tool_calls":[ ]}`,
	} {
		in, err := parse(t, `{"model":"m",`+tools+`,"messages":[`+messages+`]}`).Normalize()
		if err != nil {
			t.Errorf("%s: %v", messages, err)
			continue
		}
		for i, m := range in.Messages {
			if m.Role != "assistant" && m.ToolCalls != nil {
				t.Errorf("%s: messages[%d] stored with tool_calls %s", messages, i, m.ToolCalls)
			}
		}
	}
}
