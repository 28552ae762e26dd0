package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A history whose call is answered by two tool messages (an agent that
// retried a tool submission, or wrote an "aborted" placeholder and then the
// result) was stored and run, and every OpenAI and Anthropic target refused
// it as the caller's bad request: the job failed and its Idempotency-Key
// stayed bound to it. It is refused with a 400 naming the second tool
// message before anything is stored, so the corrected history runs with the
// same key. Found by review (rchat9 F1).
func TestChatRefusesCallAnsweredTwice(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "sunny in Paris"} }})
	history := `{"model":"default","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[` +
		`{"role":"user","content":"Paris?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"Tool execution aborted"}`
	r := b.do(t, http.MethodPost, chatPath, acmeKey, history+`,{"role":"tool","tool_call_id":"call_1","content":"sunny"}]}`,
		"Idempotency-Key", "answered-twice")
	_, code, param, msg := openAIErr(r)
	if r.status != http.StatusBadRequest || code != "invalid_request" || param != "messages[3].tool_call_id" ||
		!strings.Contains(msg, "call_1") || !strings.Contains(msg, "messages[2]") {
		t.Errorf("status %d body %s; want 400 invalid_request on messages[3].tool_call_id saying call_1 is already answered by messages[2]", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Errorf("%d jobs stored for a history every OpenAI and Anthropic target refuses (its key is now bound to a failing job)", n)
	}
	// The key stays free: the history without the duplicate, sent with it,
	// runs.
	r = b.do(t, http.MethodPost, chatPath, acmeKey, history+`]}`, "Idempotency-Key", "answered-twice")
	if r.status != http.StatusOK {
		t.Errorf("corrected history with the refused request's key: status %d body %s", r.status, r.raw)
	}
}
