package chat

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Two calls of one assistant turn with the same id, each "answered": the
// Anthropic adapter sends two tool_use blocks with one id, which the Messages
// API refuses ("messages.1.content.1: `tool_use` ids must be unique"), and a
// tool message cannot say which of the two it answers. Normalize refuses the
// second call's id, naming the first. Found by review.
func TestNormalizeRefusesDuplicateCallIDs(t *testing.T) {
	call := func(id string) string {
		return `{"id":"` + id + `","type":"function","function":{"name":"weather","arguments":"{}"}}`
	}
	answer := func(id string) string { return `,{"role":"tool","tool_call_id":"` + id + `","content":"sunny"}` }
	body := func(ids ...string) string {
		calls, answers := make([]string, len(ids)), ""
		for j, id := range ids {
			calls[j] = call(id)
			answers += answer(id)
		}
		return `{"model":"m","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[{"role":"user","content":"Paris and Rome?"},` +
			`{"role":"assistant","content":null,"tool_calls":[` + strings.Join(calls, ",") + `]}` + answers + `]}`
	}
	many := make([]string, 40) // past the quadratic scan: the map's
	for j := range many {
		many[j] = fmt.Sprintf("c%d", j)
	}
	many[33] = "c7"
	for _, c := range []struct {
		ids         []string
		param, says string
	}{
		{[]string{"c1", "c1"}, "messages[1].tool_calls[1].id", "messages[1].tool_calls[0]"},
		{[]string{"a", "b", "c", "b"}, "messages[1].tool_calls[3].id", "messages[1].tool_calls[1]"},
		{many, "messages[1].tool_calls[33].id", "messages[1].tool_calls[7]"},
	} {
		_, err := parse(t, body(c.ids...)).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("ids %q: Normalize = %v; want a 400 on %s naming %s", c.ids, err, c.param, c.says)
		}
	}
	// One id in two turns is two calls, each answered in its turn.
	twice := `{"model":"m","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[{"role":"user","content":"Paris?"},` +
		`{"role":"assistant","content":null,"tool_calls":[` + call("c1") + `]}` + answer("c1") + `,{"role":"user","content":"Rome?"},` +
		`{"role":"assistant","content":null,"tool_calls":[` + call("c1") + `]}` + answer("c1") + `]}`
	if _, err := parse(t, twice).Normalize(); err != nil {
		t.Errorf("one id in two turns: %v", err)
	}
}
