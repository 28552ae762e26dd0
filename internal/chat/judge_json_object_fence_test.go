package chat

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// json_object unwrapped a fence with any language tag (```python, or
// ```yaml -- text, dropping the text) where the validator unwraps only an
// empty or json tag, and a single fence. Both judge by contract.StripFence.
func TestJudgeJSONObjectFenceRule(t *testing.T) {
	in := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	for content, want := range map[string]string{
		"```json\n{\"a\":1}\n```":                          `{"a":1}`,
		"```JSON\r\n{\"a\":1}\r\n```":                      `{"a":1}`,
		"```\n{\"a\":1}\n```":                              `{"a":1}`,
		" {\"a\":1}\n":                                     " {\"a\":1}\n",
		"```python\n{\"a\":1}\n```":                        "",
		"```yaml -- text\n{\"a\":1}\n```":                  "",
		"```json\n{\"a\":1}\n```\n```json\n{\"b\":1}\n```": "",
	} {
		raw, vs := Judge(in, nil, "j", &providers.Response{Content: content, FinishReason: "stop"})
		if want == "" {
			if len(vs) != 1 || vs[0].Rule != "json.syntax" {
				t.Errorf("%q: %v, want json.syntax", content, vs)
			}
			continue
		}
		if vs != nil {
			t.Errorf("%q: %v", content, vs)
			continue
		}
		comp, err := DecodeCompletion(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := comp.Choices[0].Message.Text(); got != want {
			t.Errorf("%q: content %q, want %q", content, got, want)
		}
	}
}
