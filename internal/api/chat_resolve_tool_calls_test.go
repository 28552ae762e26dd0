package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// A chat call whose tool_choice requires a tool call ("required", a named
// function, allowed_tools in mode required) and whose attempt became unknown
// can never be resolved as succeeded: judgeResolution judges the result as
// text content with finish_reason "stop" and no tool calls, so every result
// breaks the tool_calls rule (422) — the tool calls the provider actually
// returned (and billed) included, since the resolution has no way to carry
// them. The operator can only resolve the attempt as failed, and the caller,
// whose key is bound to the job, gets a failure for an answer that exists.
// docs/api.md says only "For a chat job, result is the assistant's content
// (a string, or the JSON object its response_format asks for)".
func TestResolveChatToolChoiceRequired(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	body := `{"model":"default","messages":[{"role":"user","content":"What is the weather in Paris?"}],` +
		`"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],` +
		`"tool_choice":"required"}`
	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "resolve-tool-required")
	_, code, _, _ := openAIErr(r)
	if r.status != http.StatusGatewayTimeout || code != "outcome_unknown" {
		t.Fatalf("status %d code %q; want 504 outcome_unknown", r.status, code)
	}
	id := r.header.Get("X-Router-Job-Id")
	// The provider's answer as the operator finds it (the assistant message
	// of the stored completion), then as plain content: neither can settle it.
	results := []string{
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]}`,
		`[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]`,
		`"calling weather"`,
	}
	accepted := false
	for _, res := range results {
		rr := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+res+`}`)
		t.Logf("resolve with result %s: status %d: %s", res, rr.status, rr.raw)
		if rr.status == http.StatusOK {
			accepted = true
			break
		}
	}
	if !accepted {
		t.Fatalf("no succeeded resolution of a tool_choice-required chat job is accepted (each is 422): " +
			"the tool calls the provider returned cannot be recorded, so the job can only be failed")
	}
	rep := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "resolve-tool-required")
	choices, _ := rep.body["choices"].([]any)
	if rep.status != http.StatusOK || len(choices) != 1 || choices[0].(map[string]any)["finish_reason"] != "tool_calls" {
		t.Fatalf("replay after the resolution: status %d %s; want the tool call, finish_reason tool_calls", rep.status, rep.raw)
	}
}
