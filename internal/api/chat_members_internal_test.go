package api

import (
	"errors"
	"strings"
	"testing"
)

// checkChatMembers refuses, naming the member as OpenAI's param: a name that
// differs from a known one only in case (encoding/json's fold, U+017F and
// the Kelvin sign included), at every level the router reads; a top-level
// near miss of a parameter; a key twice. It ignores other unknown names,
// vendors' parameters near known ones among them, and what is inside values
// the router does not read by name (a schema's properties).
func TestCheckChatMembers(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct{ body, param, says string }{
		{`{"model":"a",` + msgs + `}`, "", ""},
		{`{"model":"a",` + msgs + `,"Model":"b"}`, "Model", `differs from "model" only in case`},
		{`{"model":"a","meſſageſ":[]}`, "meſſageſ", `"messages"`},
		{`{"model":"a",` + msgs + `,"\u004dodel":"b"}`, "Model", `"model"`},
		{`{"model":"a",` + msgs + `,"max_toKens":1}`, "max_toKens", `"max_tokens"`},
		{`{"model":"a",` + msgs + `,"top_\u212a":1}`, "", ""}, // top_K folds to no known name: top_k is ignored
		{`{"model":"a","messages":[{"role":"user","content":"a"},{"role":"user","content":"a","Content":"b"}]}`, "messages[1].Content", `"content"`},
		{`{"model":"a","messages":[{"role":"user","content":[{"type":"text","text":"a","Text":"b"}]}]}`, "messages[0].content[0].Text", `"text"`},
		{`{"model":"a","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","Arguments":"{}"}}]}]}`,
			"messages[0].tool_calls[0].function.Arguments", `"arguments"`},
		{`{"model":"a",` + msgs + `,"response_format":{"Type":"json_object"}}`, "response_format.Type", `"type"`},
		{`{"model":"a",` + msgs + `,"response_format":{"type":"json_schema","json_schema":{"name":"r","Schema":{}}}}`, "response_format.json_schema.Schema", `"schema"`},
		{`{"model":"a",` + msgs + `,"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"properties":{"Name":{},"name":{}}}}}}`, "", ""},
		{`{"model":"a",` + msgs + `,"stream":true,"stream_options":{"Include_Usage":true}}`, "stream_options.Include_Usage", `"include_usage"`},
		{`{"model":"a",` + msgs + `,"tools":[{"type":"function","Function":{"name":"f"}}]}`, "tools[0].Function", `"function"`},
		{`{"model":"a",` + msgs + `,"tools":[{"type":"function","function":{"Name":"f","parameters":{"properties":{"Name":{}}}}}]}`, "tools[0].function.Name", `"name"`},
		{`{"model":"a",` + msgs + `,"tool_choice":{"type":"function","function":{"NAME":"f"}}}`, "tool_choice.function.NAME", `"name"`},
		{`{"model":"a",` + msgs + `,"tool_choice":{"type":"allowed_tools","allowed_tools":{"Mode":"auto"}}}`, "tool_choice.allowed_tools.Mode", `"mode"`},
		{`{"model":"a",` + msgs + `,"max_token":5}`, "max_token", `did you mean "max_tokens"?`},
		{`{"model":"a",` + msgs + `,"temprature":0}`, "temprature", `did you mean "temperature"?`},
		{`{"model":"a",` + msgs + `,"tool":[]}`, "tool", `did you mean "tools"?`},
		{`{"model":"a",` + msgs + `,"messages[0]":1,"contnet":1,"top_k":1,"top_a":1,"min_p":1,"models":[],"min_tokens":1,"store":true,` +
			`"metadata":{},"service_tier":"auto","prediction":{},"prompt_cache_key":"k","safety_identifier":"s","repetition_penalty":1,` +
			`"extra_body":{},"Top_K":1,"x":1,"nn":1,"best_of":1,"guided_json":{},"usage":{},"provider":{},"transforms":[]}`, "", ""},
		{`{"model":"a",` + msgs + `,"model":"b"}`, "model", `the member "model" appears twice`},
		{`{"model":"a","messages":[{"role":"user","content":"a","content":"b"}]}`, "messages[0].content", `the object at /messages/0 has the key "content" twice`},
		{`{"model":"a",` + msgs + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","type":"string"}}}]}`,
			"tools[0].function.parameters.type", `has the key "type" twice`},
		{`{"model":"a",` + msgs + `,"x":{"Model":{"a":"\"}]","Messages":[1,{"b":2}]}},"seed":1}`, "", ""},
	} {
		err := checkChatMembers([]byte(tc.body))
		if tc.param == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.body, err)
			}
			continue
		}
		var me *chatMemberError
		if !errors.As(err, &me) || me.param != tc.param || !strings.Contains(me.detail, tc.says) {
			t.Errorf("%s: %#v, want param %q and a detail that says %q", tc.body, me, tc.param, tc.says)
		}
	}
}

// The shapes the checks rely on are there: if chat.Request or go-openai's
// types lose one, this says so (graft leaves out a path that is gone).
func TestChatShapesHoldEveryCheckedLevel(t *testing.T) {
	for _, path := range [][]string{
		{"messages", "content", "text"}, {"messages", "tool_calls", "function", "arguments"}, {"response_format", "json_schema", "schema"},
		{"stream_options", "include_usage"}, {"tools", "function", "parameters"}, {"tool_choice", "allowed_tools", "tools", "function", "name"},
	} {
		s := chatShapes
		for i, name := range path {
			next, ok := s.members[name]
			if !ok || (next == nil && i+1 < len(path)) {
				t.Fatalf("chatShapes has no %s", strings.Join(path[:i+1], "."))
			}
			s = next
		}
	}
}

// No deliberately ignored parameter is refused as a near miss of another.
func TestIgnoredChatParamsAreNotNearMisses(t *testing.T) {
	for _, name := range ignoredChatParams {
		if err := unknownMember(chatShapes, name, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func BenchmarkCheckChatMembers(b *testing.B) {
	body := []byte(`{"model":"default","temperature":0.2,"max_tokens":200,"messages":[{"role":"system","content":"You are terse."},` +
		`{"role":"user","content":"` + strings.Repeat("word ", 400) + `"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",` +
		`"function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}],` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := checkChatMembers(body); err != nil {
			b.Fatal(err)
		}
	}
}
