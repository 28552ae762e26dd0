package chat

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// Judge trimmed an answer with strings.TrimSpace, which removes Unicode
// spaces, and returned the answer as written: "{\"a\":1}\u00a0" won, and the
// caller got content its JSON reader cannot parse. Only JSON whitespace is
// trimmed now; any other space is json.syntax, for json_object and
// json_schema alike.
func TestJudgeTrimsOnlyJSONWhitespace(t *testing.T) {
	object := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	schema := &Input{ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "r",
		Schema: json.RawMessage(`{"type":"object"}`)}}}
	v, err := schema.Validator()
	if err != nil {
		t.Fatal(err)
	}
	for _, space := range []string{"\u00a0", "\u0085", "\u2028", "\u3000", "\v", "\f"} {
		for _, content := range []string{`{"a":1}` + space, space + `{"a":1}`, "```json\n{\"a\":1}" + space + "\n```"} {
			if _, vs := Judge(object, nil, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(vs) != 1 || vs[0].Rule != "json.syntax" {
				t.Errorf("json_object %q: %v, want json.syntax", content, vs)
			}
			if _, vs := Judge(schema, v, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(vs) != 1 || vs[0].Rule != "json.syntax" {
				t.Errorf("json_schema %q: %v, want json.syntax", content, vs)
			}
		}
	}
	for _, content := range []string{" \t\r\n{\"a\":1}\r\n", "```json \r\n{\"a\":1}\r\n```\n"} {
		if _, vs := Judge(object, nil, "j", &providers.Response{Content: content, FinishReason: "stop"}); vs != nil {
			t.Errorf("json_object %q: %v", content, vs)
		}
	}
}
