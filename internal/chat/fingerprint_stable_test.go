package chat

import (
	"encoding/json"
	"testing"
)

// stableBody uses every request field the router stored before
// parallel_tool_calls, verbosity, chat_template_kwargs, refusal and
// reasoning_content were added (content as strings: text parts are now
// joined with newlines).
const stableBody = `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi","name":"ann"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
	`{"role":"tool","tool_call_id":"c1","content":"42"},{"role":"assistant","content":""},{"role":"user","content":"and?"}],` +
	`"temperature":0.5,"top_p":0.9,"stop":["END"],"presence_penalty":0.5,"frequency_penalty":-1,"logit_bias":{"50256":-100},` +
	`"reasoning_effort":"low","max_completion_tokens":64,"seed":7,"user":"u-1","stream":true,"stream_options":{"include_usage":true},` +
	`"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"},"strict":true}},` +
	`"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto","n":1,"logprobs":false,"service_tier":"auto"}`

// stableIntent is the stored intent (whose bytes are the fingerprint) of
// stableBody as the router stored it before those fields existed. A request
// that uses none of them must keep it byte for byte, or a resend with the
// same Idempotency-Key across an upgrade is a 409.
const stableIntent = `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi","name":"ann"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"42","tool_call_id":"c1"},{"role":"assistant","content":""},{"role":"user","content":"and?"}],"temperature":0.5,"top_p":0.9,"stop":["END"],"max_tokens":64,"seed":7,"user":"u-1","response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"},"strict":true}},"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto","presence_penalty":0.5,"frequency_penalty":-1,"logit_bias":{"50256":-100},"reasoning_effort":"low"}`

func TestIntentOfARequestWithoutTheNewFieldsIsUnchanged(t *testing.T) {
	in, err := parse(t, stableBody).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != stableIntent {
		t.Errorf("stored intent\n%s\nwant\n%s", b, stableIntent)
	}
}
