package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/chat"
)

// Every error the router names inside messages says which message: param
// messages[1].name, messages[3].tool_call_id, messages[0].content (docs/chat.md,
// OpenAI's own form). A member of the wrong type inside a message did not:
// encoding/json's UnmarshalTypeError.Field has no index, so describeJSONError
// answered param "messages.name". In an agent's history of dozens of turns
// that does not say which message is wrong. Found by review (rchat7).
func TestTypeErrorParamNamesTheMessage(t *testing.T) {
	for _, tc := range []struct{ body, param string }{
		{`{"model":"default","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x","name":7}]}`, "messages[1].name"},
		{`{"model":"default","messages":[{"role":5,"content":"hi"}]}`, "messages[0].role"},
		{`{"model":"default","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"tool","content":"r","tool_call_id":7}]}`, "messages[2].tool_call_id"},
		// Strings holding brackets, commas and escaped quotes, white space,
		// a value that is an object or an array, a name in another case.
		{"{\n  \"model\": \"default\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"a],[{\\\"x\\\":1},\"} ,\n    {\"role\": \"assistant\", \"refusal\": true}\n  ]\n}", "messages[1].refusal"},
		{`{"model":"default","messages":[{"role":"user","content":"hi"},{"role":{"a":[1,2]},"content":"x"}]}`, "messages[1].role"},
		{`{"model":"default","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x","Reasoning_Content":[1]}]}`, "messages[1].reasoning_content"},
		// The message itself of the wrong type.
		{`{"model":"default","messages":[{"role":"user","content":"hi"},7]}`, "messages[1]"},
		// Outside an array, the field as before.
		{`{"model":"default","messages":[{"role":"user","content":"hi"}],"max_tokens":1.5}`, "max_tokens"},
		{`{"model":"default","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":"yes"}}`, "stream_options.include_usage"},
	} {
		var req chat.Request
		err := decodeChat([]byte(tc.body), &req)
		if err == nil {
			t.Fatalf("%s: decoded", tc.body)
		}
		detail, param := describeChatError(err)
		if param != tc.param {
			t.Errorf("param %q, want %q (%s)", param, tc.param, tc.body)
		}
		if !strings.Contains(detail, `field "`+tc.param+`" must be`) {
			t.Errorf("detail %q does not name %s", detail, tc.param)
		}
	}
}

// The steps to a byte are found whatever the nesting, and a path that does
// not match the body's (a map's keys are not in Field) leaves the error as
// it is.
func TestJSONStepsToTheWrongValue(t *testing.T) {
	body := []byte(` {"a":[[1,{"b":[true," ]",{"c":9}]}]]}`)
	pos := strings.Index(string(body), "9")
	var got strings.Builder
	for _, s := range jsonStepsTo(body, pos) {
		if s.member {
			got.WriteString(".")
		} else {
			fmt.Fprintf(&got, "[%d]", s.index)
		}
	}
	if got.String() != ".[0][1].[2]." {
		t.Errorf("steps %q", got.String())
	}
	var m struct {
		Tags map[string][]int `json:"tags"`
	}
	in := []byte(`{"tags":{"x":[1,"two"]}}`)
	err := json.Unmarshal(in, &m)
	if located := locateTypeError(in, err); located != err {
		t.Errorf("a map's element located as %v; want the error as it was (%v)", located, err)
	}
}
