package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/providers"
)

// A chat job's answer is stored as a string (the completion's
// message.content), not as jsonb of its own: the escape \u0000, a lone
// surrogate escape or a number like 1e2000 inside the model's JSON text are
// six or so plain characters of that string, and the completion holding them
// is storable (jsontext.Check passes on it, as Judge itself checks). Yet a
// json_schema answer holding one is refused as json.unstorable ("it cannot be
// stored as the result") — a rule ProviderRule counts against the target's
// circuit breaker for every tenant — while the same text under json_object
// wins. One tenant whose prompt makes the model write such an escape (or its
// schema admit such a number) fails every attempt over and opens the
// route's breakers for everyone: the valid answer is refused, and blamed on
// the provider.
func TestJudgeJSONSchemaRefusesNoStorableAnswer(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"}}}`)
	withSchema := &Input{ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "r", Schema: schema}}}
	v, err := withSchema.Validator()
	if err != nil {
		t.Fatal(err)
	}
	object := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	for _, content := range []string{
		`{"s":"C strings end with \u0000"}`,
		`{"s":"half an emoji: \ud83d"}`,
		`{"n":1e2000}`,
	} {
		doc, vs := Judge(object, nil, "j", &providers.Response{Content: content, FinishReason: "stop"})
		if len(vs) != 0 {
			t.Fatalf("premise: json_object refuses %s: %v", content, vs)
		}
		if e := jsontext.Check(doc); e != nil {
			t.Fatalf("premise: the completion is not storable: %v", e)
		}
		if _, vs := Judge(withSchema, v, "j", &providers.Response{Content: content, FinishReason: "stop"}); len(vs) != 0 {
			t.Errorf("json_schema answer %s matches the schema and its completion is storable, but is refused: %v (counted against the target's breaker: ProviderRule(%q) = %v)",
				content, vs, vs[0].Rule, ProviderRule(vs[0].Rule))
		}
	}
}

// What a chat answer is refused for when the text is stored as a string is
// the caller's response_format, not the provider's: a number the schema
// check cannot read (json.number_range; it used to be json.unstorable, or a
// panic past jsonb's range) and JSON nested past contract.MaxAnswerDepth
// (json.too_deep, json_object and json_schema alike) never count against a
// target's breaker.
func TestJudgeTextRefusalsAreTheCallers(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","minimum":0}}}`)
	withSchema := &Input{ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "r", Schema: schema}}}
	v, err := withSchema.Validator()
	if err != nil {
		t.Fatal(err)
	}
	object := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	deep := `{"n":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`
	for _, c := range []struct {
		in      *Input
		v       *contract.Validator
		content string
		rule    string
	}{
		{withSchema, v, `{"n":1e999999999}`, "json.number_range"},
		{withSchema, v, deep, "json.too_deep"},
		{object, nil, deep, "json.too_deep"},
	} {
		_, vs := Judge(c.in, c.v, "j", &providers.Response{Content: c.content, FinishReason: "stop"})
		if len(vs) != 1 || vs[0].Rule != c.rule || ProviderRule(vs[0].Rule) {
			t.Errorf("%.40s: %v, want one %s violation, the caller's (not ProviderRule)", c.content, vs, c.rule)
		}
	}
	// A strict tool's arguments are a string of the completion too.
	tools := &Input{Tools: json.RawMessage(`[{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object","properties":{"s":{"type":"string"}}}}}]`)}
	call := `[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"s\":\"nul \\u0000\"}"}}]`
	if _, vs := Judge(tools, nil, "j", &providers.Response{ToolCalls: json.RawMessage(call), FinishReason: "tool_calls"}); len(vs) != 0 {
		t.Errorf("strict tool arguments holding the escape \\u0000 are refused: %v", vs)
	}
}
