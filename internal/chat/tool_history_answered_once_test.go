package chat

import (
	"errors"
	"strings"
	"testing"
)

// Two tool messages answering the same call of one assistant turn (an agent
// that retried a tool submission and persisted its result twice, or an
// "aborted" placeholder followed by the real result). OpenAI refuses the
// history ("Invalid parameter: Duplicate value for 'tool_call_id' of
// 'call_1', in messages[2] and messages[3].", param messages.[3].tool_call_id)
// and so does Anthropic, to which the adapter sends two tool_result blocks of
// one id ("each tool_use must have a single result. Found multiple
// `tool_result` blocks with id: ..."). Normalize refuses it before anything
// is stored, naming the second tool message and the earlier one that
// answered the call, as it refuses two calls of one id (uniqueCallIDs) and a
// tool message answering no call. Found by review (rchat9 F1).
func TestNormalizeRefusesSecondAnswerToOneCall(t *testing.T) {
	call := func(id string) string {
		return `{"id":"` + id + `","type":"function","function":{"name":"weather","arguments":"{}"}}`
	}
	answer := func(id, content string) string {
		return `,{"role":"tool","tool_call_id":"` + id + `","content":"` + content + `"}`
	}
	body := func(calls []string, answers string) string {
		return `{"model":"m","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[{"role":"user","content":"Paris?"},` +
			`{"role":"assistant","content":null,"tool_calls":[` + strings.Join(calls, ",") + `]}` + answers + `]}`
	}
	for _, c := range []struct {
		name, body, param, earlier string
	}{
		{"placeholder then result", body([]string{call("call_1")}, answer("call_1", "Tool execution aborted")+answer("call_1", "sunny")),
			"messages[3].tool_call_id", "messages[2]"},
		{"repeat after another call's answer", body([]string{call("a"), call("b")}, answer("a", "sunny")+answer("b", "rain")+answer("a", "sunny")),
			"messages[4].tool_call_id", "messages[2]"},
		{"every call answered, one twice", body([]string{call("a"), call("b")}, answer("a", "sunny")+answer("b", "rain")+answer("b", "rain")),
			"messages[4].tool_call_id", "messages[3]"},
	} {
		in, err := parse(t, c.body).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != c.param || !strings.Contains(re.Message, c.earlier) || !strings.Contains(re.Message, "already answered") {
			t.Errorf("%s: Normalize = %v, %v; want a 400 on %s saying the call is already answered by %s", c.name, in != nil, err, c.param, c.earlier)
		}
	}
	// One id answered once in each of two turns is two calls, each answered
	// once.
	twice := `{"model":"m","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[{"role":"user","content":"Paris?"},` +
		`{"role":"assistant","content":null,"tool_calls":[` + call("c1") + `]}` + answer("c1", "sunny") + `,{"role":"user","content":"Rome?"},` +
		`{"role":"assistant","content":null,"tool_calls":[` + call("c1") + `]}` + answer("c1", "rain") + `]}`
	if _, err := parse(t, twice).Normalize(); err != nil {
		t.Errorf("one id in two turns, each answered once: %v", err)
	}
}
