package chat

import (
	"errors"
	"testing"
)

// A message whose content is null is refused (400, param
// messages[i].content: "a user's null is not an empty question"), as OpenAI
// refuses it; a message with no content member at all was taken as the
// empty string, stored as a job and sent to the providers (a paid call
// answering an empty question). OpenAI refuses it too ("Missing required
// parameter: 'messages[0].content'"): content is required on every role but
// an assistant turn that called tools or carries a refusal.
func TestMissingContentRefusedLikeNull(t *testing.T) {
	for _, tc := range []struct{ body, param string }{
		{`{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content"},
		{`{"model":"m","messages":[{"role":"system"},{"role":"user","content":"hi"}]}`, "messages[0].content"},
		{`{"model":"m","messages":[{"role":"developer"},{"role":"user","content":"hi"}]}`, "messages[0].content"},
		{`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user"}]}`, "messages[2].content"},
	} {
		in, err := parse(t, tc.body).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != tc.param {
			content := "?"
			if in != nil && len(in.Messages) > 0 {
				content = in.Messages[len(in.Messages)-1].Content
			}
			t.Errorf("%s: Normalize gave err %v (last message's content %q); want a RequestError with param %s, as for \"content\": null",
				tc.body, err, content, tc.param)
		}
	}
	// Still accepted: an assistant turn that called tools, without content.
	if _, err := parse(t, `{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"hi"},`+
		`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},`+
		`{"role":"tool","tool_call_id":"c1","content":"ok"}]}`).Normalize(); err != nil {
		t.Errorf("an assistant turn with tool_calls and no content: %v; want it accepted", err)
	}
}
