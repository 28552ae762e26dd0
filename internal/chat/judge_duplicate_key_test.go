package chat

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// An answer with a key twice was judged on the last value and returned to
// the caller as written, both keys in it; a reader that keeps the first
// value saw one that never passed. It is refused (json.duplicate_key), for
// json_object and json_schema alike, and the job fails over.
func TestJudgeRefusesDuplicateKeys(t *testing.T) {
	object := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	schema := &Input{ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "r",
		Schema: json.RawMessage(`{"type":"object","properties":{"priority":{"enum":["low","high"]},"n":{"maximum":10}}}`)}}}
	v, err := schema.Validator()
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{
		`{"priority":"bogus","priority":"low"}`,
		`{"priority":"bogus","\u0070riority":"low"}`,
		`{"n":1e9,"n":1}`,
		"```json\n{\"n\":1,\"n\":1}\n```",
	} {
		if _, vs := Judge(object, nil, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(vs) != 1 || vs[0].Rule != "json.duplicate_key" || vs[0].Path != "$" {
			t.Errorf("json_object %q: %v, want json.duplicate_key at $", content, vs)
		}
		if _, vs := Judge(schema, v, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(vs) != 1 || vs[0].Rule != "json.duplicate_key" || vs[0].Path != "$" {
			t.Errorf("json_schema %q: %v, want json.duplicate_key at $", content, vs)
		}
	}
}
