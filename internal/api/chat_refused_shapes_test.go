package api_test

import (
	"net/http"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A request every provider refuses is refused before anything is stored
// (SPEC §4.4, docs/chat.md: "nothing is stored, so a corrected retry with the
// same Idempotency-Key runs normally"). These were stored as jobs and sent:
// OpenAI refuses tool_call_id/tool_calls on a user message, a function or
// participant name with a space and a json_schema that is not an object;
// Anthropic refuses the tool_result that answers a user's "call" (no
// tool_use before it), duplicate tool names and duplicate tool_use ids.
// Found by review.
func TestChatRefusesShapesEveryProviderRefuses(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "hello"} }})
	const call = `{"id":"c1","type":"function","function":{"name":"weather","arguments":"{}"}}`
	const tools = `"tools":[{"type":"function","function":{"name":"weather"}}]`
	cases := []struct{ body, param string }{
		{`{"model":"default",` + tools + `,"messages":[` +
			`{"role":"user","content":"Paris?","tool_calls":[` + call + `]},{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`, "messages[0].tool_calls"},
		{`{"model":"default","messages":[{"role":"user","content":"hi","tool_call_id":"c1"}]}`, "messages[0].tool_call_id"},
		{`{"model":"default","tools":[{"type":"function","function":{"name":"get weather"}}],"messages":[{"role":"user","content":"hi"}]}`, "tools[0].function.name"},
		{`{"model":"default","tools":[{"type":"function","function":{"name":"weather"}},{"type":"function","function":{"name":"weather"}}],` +
			`"messages":[{"role":"user","content":"hi"}]}`, "tools[1].function.name"},
		{`{"model":"default","messages":[{"role":"user","content":"hi","name":"Ann Smith"}]}`, "messages[0].name"},
		{`{"model":"default",` + tools + `,"messages":[{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[` +
			`{"id":"c1","type":"function","function":{"name":"get weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`,
			"messages[1].tool_calls[0].function.name"},
		{`{"model":"default",` + tools + `,"messages":[{"role":"user","content":"Paris and Rome?"},{"role":"assistant","content":null,"tool_calls":[` +
			call + `,` + call + `]},{"role":"tool","tool_call_id":"c1","content":"sunny"},{"role":"tool","tool_call_id":"c1","content":"rain"}]}`,
			"messages[1].tool_calls[1].id"},
		{`{"model":"default","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":true}}}`,
			"response_format.json_schema.schema"},
	}
	for i, c := range cases {
		r := b.do(t, http.MethodPost, chatPath, acmeKey, c.body, "Idempotency-Key", "refused-"+string(rune('a'+i)))
		_, code, param, _ := openAIErr(r)
		if r.status != http.StatusBadRequest || code != "invalid_request" || param != c.param {
			t.Errorf("%s\nstatus %d body %s; want 400 invalid_request naming %s before anything is stored", c.body, r.status, r.raw, c.param)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Errorf("%d jobs stored for requests every provider refuses (their keys are now bound to failing jobs)", n)
	}
	// The key of a refused request stays free: the corrected request, sent
	// with it, runs.
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi","tool_call_id":""}]}`,
		"Idempotency-Key", "refused-b")
	if r.status != http.StatusOK {
		t.Errorf("corrected request with the refused request's key: status %d body %s", r.status, r.raw)
	}
}
