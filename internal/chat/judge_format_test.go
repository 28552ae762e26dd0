package chat

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A json_schema answer wrapped in one markdown code fence passes the
// validator (allow_fenced is on for chat), and the completion was built from
// the raw content: the caller asked for JSON and got "```json\n{...}\n```",
// which no JSON parser reads (SPEC §4.3). The completion carries the JSON
// inside the fence, as the model wrote it. Found by review.
func TestJudgeUnwrapsAFencedJSONSchemaAnswer(t *testing.T) {
	in := &Input{ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "r",
		Schema: json.RawMessage(`{"type":"object","required":["a"]}`)}}}
	v, err := in.Validator()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ content, want string }{
		{"```json\n{\"a\":1}\n```", `{"a":1}`},
		{"  ```JSON\n{\n  \"a\": 1,\n  \"b\": \"run ```make```\"\n}\n```\n", "{\n  \"a\": 1,\n  \"b\": \"run ```make```\"\n}"},
		{"```\n{\"a\": 2}\n```", `{"a": 2}`},
		// Bare JSON is stored as the model wrote it, as before.
		{" {\"a\": 3}\n", " {\"a\": 3}\n"},
	}
	for _, c := range cases {
		raw, violations := Judge(in, v, "j", &providers.Response{Content: c.content, FinishReason: "stop"})
		if len(violations) > 0 {
			t.Errorf("%q refused: %v", c.content, violations)
			continue
		}
		comp, err := DecodeCompletion(raw)
		if err != nil {
			t.Fatal(err)
		}
		got := comp.Choices[0].Message.Text()
		if !json.Valid([]byte(got)) {
			t.Errorf("%q: completion content %q is not JSON", c.content, got)
		}
		if got != c.want {
			t.Errorf("%q: completion content %q, want %q (the model's text inside the fence)", c.content, got, c.want)
		}
	}
}

// response_format json_object asks for a JSON object: `null` decoded into a
// nil map without error and won. Found by review.
func TestJudgeJSONObjectRefusesNull(t *testing.T) {
	in := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	for _, content := range []string{"null", " null\n", "[]", `"x"`, "1"} {
		_, violations := Judge(in, nil, "j", &providers.Response{Content: content, FinishReason: "stop"})
		if len(violations) == 0 {
			t.Errorf("json_object answer %q accepted", content)
			continue
		}
		if ProviderRule(violations[0].Rule) {
			t.Errorf("json_object answer %q: rule %q counts against the target's breaker", content, violations[0].Rule)
		}
	}
	for _, content := range []string{"{}", ` {"a":null} `} {
		if _, violations := Judge(in, nil, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(violations) > 0 {
			t.Errorf("json_object answer %q refused: %v", content, violations)
		}
	}
}

// A json_object answer wrapped in one markdown code fence is accepted and
// returned without the fence, as a json_schema one is (it was refused, and
// the job failed over, for a wrapper the json_schema path already strips).
func TestJudgeUnwrapsAFencedJSONObjectAnswer(t *testing.T) {
	in := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	raw, bad := Judge(in, nil, "job-1", &providers.Response{Content: "```json\n{\"a\": 1}\n```", FinishReason: "stop"})
	if len(bad) > 0 {
		t.Fatalf("a fenced object refused: %v", bad)
	}
	c, err := DecodeCompletion(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Text(); got != `{"a": 1}` {
		t.Errorf("content %q, want the object as written inside the fence", got)
	}
	// A fence around something that is not an object is still refused.
	if _, bad := Judge(in, nil, "job-1", &providers.Response{Content: "```json\n[1]\n```", FinishReason: "stop"}); len(bad) == 0 {
		t.Error("a fenced array accepted as a JSON object")
	}
}
