package providers

import (
	"context"
	"encoding/json"
	"testing"
)

// parallel_tool_calls, verbosity and chat_template_kwargs reach an
// OpenAI-compatible provider as the caller sent them, plain and streamed;
// they were dropped, so a caller's parallel_tool_calls false was never asked
// of the model. Found by review.
func TestOpenAISendsParallelToolCallsVerbosityAndTemplateKwargs(t *testing.T) {
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, nil)
	off := false
	withTools := toolRequest()
	withTools.ParallelToolCalls = &off
	plain := testRequest()
	plain.Verbosity = "low"
	plain.ChatTemplateKwargs = json.RawMessage(`{"enable_thinking":false,"budget":12345678901234567890}`)
	for name, c2 := range map[string]struct {
		req  *Request
		want map[string]string
	}{
		"tools":   {withTools, map[string]string{"parallel_tool_calls": "false"}},
		"kwargs":  {plain, map[string]string{"verbosity": `"low"`, "chat_template_kwargs": `{"budget":12345678901234567890,"enable_thinking":false}`}},
		"neither": {testRequest(), map[string]string{"parallel_tool_calls": "", "verbosity": "", "chat_template_kwargs": ""}},
	} {
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = p.CompleteStream(context.Background(), c2.req, nil)
			} else {
				_, err = p.Complete(context.Background(), c2.req)
			}
			if err != nil {
				t.Fatalf("%s, stream %v: %v", name, stream, err)
			}
			body := c.last(t)
			var got map[string]json.RawMessage
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range c2.want {
				if string(got[k]) != v {
					t.Errorf("%s, stream %v: %s sent as %s, want %q: %s", name, stream, k, got[k], v, body)
				}
			}
		}
	}
}

// An assistant turn of the history with empty content and no tool calls is
// sent with "content": "" (OpenAI refuses {"role":"assistant"} alone), and
// an assistant turn's refusal is sent as its refusal; a turn that only
// called tools still goes without content. Found by review.
func TestOpenAISendsEmptyAssistantContentAndRefusal(t *testing.T) {
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, nil)
	plain := testRequest()
	plain.Messages = append(plain.Messages, Message{Role: "assistant"}, Message{Role: "user", Content: "again"},
		Message{Role: "assistant", Refusal: "I can't help with that."}, Message{Role: "user", Content: "why?"})
	tools := toolRequest()
	tools.Messages = append(tools.Messages, Message{Role: "assistant"}, Message{Role: "user", Content: "again"})
	for name, req := range map[string]*Request{"plain": plain, "with tools": tools} {
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = p.CompleteStream(context.Background(), req, nil)
			} else {
				_, err = p.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatalf("%s, stream %v: %v", name, stream, err)
			}
			body := c.last(t)
			var got struct {
				Messages []map[string]json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(body, &got); err != nil || len(got.Messages) != len(req.Messages) {
				t.Fatalf("%s, stream %v: body %s (%v)", name, stream, body, err)
			}
			for i, m := range req.Messages {
				if m.Role != "assistant" {
					continue
				}
				content, ok := got.Messages[i]["content"]
				switch {
				case len(m.ToolCalls) > 0 && ok:
					t.Errorf("%s, stream %v: messages[%d], a tool-call turn, sent with content %s", name, stream, i, content)
				case len(m.ToolCalls) == 0 && string(content) != jsonString(m.Content):
					t.Errorf("%s, stream %v: messages[%d] sent with content %s, want %q: %s", name, stream, i, content, m.Content, body)
				}
				if r := got.Messages[i]["refusal"]; m.Refusal != "" && string(r) != jsonString(m.Refusal) {
					t.Errorf("%s, stream %v: messages[%d] sent with refusal %s, want %q", name, stream, i, r, m.Refusal)
				}
			}
		}
	}
}
