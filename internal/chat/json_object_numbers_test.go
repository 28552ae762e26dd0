package chat

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// RFC 8259 sets no range for numbers, and the json_schema path keeps them as
// written: a json_object answer holding one beyond float64 is a JSON object,
// not the caller's contract broken.
func TestJudgeJSONObjectAcceptsNumbersBeyondFloat64(t *testing.T) {
	object := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	for _, content := range []string{`{"n":1e400}`, `{"id":123456789012345678901234567890e300}`, `{"n":-1e-400}`} {
		if _, vs := Judge(object, nil, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(vs) != 0 {
			t.Errorf("json_object %s: refused %v; it is a JSON object", content, vs)
		}
	}
	for _, content := range []string{`{"n":1e400`, `{"n":1}{"m":2}`, `{"n":01}`} {
		if _, vs := Judge(object, nil, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(vs) == 0 || vs[0].Rule != "json.syntax" {
			t.Errorf("json_object %s: %v; want json.syntax", content, vs)
		}
	}
}
