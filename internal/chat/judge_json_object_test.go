package chat

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A json_object answer that is JSON but not an object was refused with Go's
// "json: cannot unmarshal array into Go value of type map[string]interface
// {}". It says what the answer is; JSON that does not parse keeps the
// parser's message (contract.ParseJSON's, which says where).
func TestJudgeJSONObjectSaysWhatTheAnswerIs(t *testing.T) {
	in := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	const prefix = "response_format json_object asks for a JSON object"
	for content, want := range map[string]string{
		"[1,2]":             prefix + "; the answer is a JSON array",
		` "x" `:             prefix + "; the answer is a JSON string",
		"1":                 prefix + "; the answer is a JSON number",
		"-1e400":            prefix + "; the answer is a JSON number",
		"true":              prefix + "; the answer is true or false",
		"false\n":           prefix + "; the answer is true or false",
		"null":              prefix + "; the answer is null",
		"```json\n[1]\n```": prefix + "; the answer is a JSON array",
		"[1,":               prefix + ": truncated JSON: input ends at byte 3 before the value is complete",
		`{"a":}`:            prefix + ": invalid JSON at byte 6: invalid character '}' looking for beginning of value",
		"nope":              prefix + ": invalid JSON at byte 2: invalid character 'o' in literal null (expecting 'u')",
	} {
		_, violations := Judge(in, nil, "j", &providers.Response{Content: content, FinishReason: "stop"})
		if len(violations) != 1 || violations[0].Message != want {
			t.Errorf("json_object answer %q: %v, want one violation %q", content, violations, want)
		}
	}
}
