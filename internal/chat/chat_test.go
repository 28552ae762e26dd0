package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

func parse(t *testing.T, body string) *Request {
	t.Helper()
	var r Request
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestNormalizeRejectsWhatItCannotServe(t *testing.T) {
	for _, c := range []struct{ body, param string }{
		{`{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{`{"model":"m","messages":[]}`, "messages"},
		{`{"model":"m","n":2,"messages":[{"role":"user","content":"x"}]}`, "n"},
		{`{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role"},
		{`{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id"},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, "messages[0].content"},
		{`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}}`, "response_format.type"},
		{`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"nonsense"}}}}`, "response_format.json_schema.schema"},
		{`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[]}`, "tools"},
	} {
		_, err := parse(t, c.body).Normalize()
		re, ok := err.(*RequestError)
		if !ok || re.Param != c.param || re.Message == "" {
			t.Errorf("%s: err %v, want param %s", c.body, err, c.param)
		}
	}
}

func TestNormalizeKeepsTheIntent(t *testing.T) {
	in, err := parse(t, `{"model":"m","stream":true,"max_completion_tokens":9,"messages":[
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"42"}],"tools":[{"type":"function","function":{"name":"f"}}],"future":1}`).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if in.MaxTokens != 9 || in.Messages[0].Content != "a\nb" || len(in.Messages[1].ToolCalls) == 0 || in.Messages[2].ToolCallID != "c1" || len(in.Tools) == 0 {
		t.Fatalf("%+v", in)
	}
	b, _ := json.Marshal(in)
	if strings.Contains(string(b), "stream") {
		t.Fatalf("stream is part of the stored intent: %s", b)
	}
}

func TestJudge(t *testing.T) {
	resp := func(content, calls string) *providers.Response {
		r := &providers.Response{Content: content, Model: "m", Created: time.Unix(1700000000, 0)}
		if calls != "" {
			r.ToolCalls = json.RawMessage(calls)
		}
		return r
	}
	jsonObj := &Input{ResponseFormat: &ResponseFormat{Type: "json_object"}}
	if _, v := Judge(jsonObj, nil, "j", resp("not json", "")); len(v) == 0 || v[0].Rule != "json.syntax" {
		t.Fatalf("json_object accepted text: %v", v)
	}
	if _, v := Judge(&Input{}, nil, "j", resp("  ", "")); len(v) == 0 || v[0].Rule != "empty" {
		t.Fatalf("empty answer accepted: %v", v)
	}
	calls := `[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]`
	if _, v := Judge(&Input{}, nil, "j", resp("", calls)); len(v) == 0 || v[0].Rule != "tool_calls" {
		t.Fatalf("tool calls accepted without tools offered: %v", v)
	}
	for _, bad := range []string{`[null]`, `[{"id":"c"}, 7]`, `["call"]`} {
		if _, v := Judge(&Input{Tools: json.RawMessage(`[{}]`)}, nil, "j", resp("", bad)); len(v) == 0 || v[0].Rule != "tool_calls" {
			t.Fatalf("tool calls %s accepted: %v", bad, v)
		}
	}
	doc, v := Judge(&Input{Tools: json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)}, nil, "0f0e-1", resp("", calls))
	if len(v) > 0 {
		t.Fatal(v)
	}
	c, err := DecodeCompletion(doc)
	if err != nil || c.ID != "chatcmpl-0f0e1" || c.Choices[0].FinishReason != "tool_calls" || c.Choices[0].Message.Content != nil {
		t.Fatalf("%s %v", doc, err)
	}
	// The stored completion re-encodes byte for byte (replays are identical).
	again, _ := json.Marshal(c)
	if string(again) != string(doc) {
		t.Fatalf("re-encoded\n%s\n%s", again, doc)
	}
}
