package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// docs/chat.md: tools are "passed through to OpenAI-compatible providers as
// sent". The adapter re-encoded them through go-openai's Tool: a function
// tool without "parameters" (optional in OpenAI's API) went out as
// "parameters": null — OpenAI answers 400 invalid_function_parameters ("None
// is not of type 'object'"), Mistral refuses it too, and the job failed — and
// a custom tool went out as a bare {"type":"custom"}. Tools, tool_choice and
// an assistant turn's tool_calls now reach the provider as the caller sent
// them, plain and streamed. Found by review.
func TestOpenAISendsToolsAsSent(t *testing.T) {
	const tools = `[{"type":"function","function":{"name":"get_time","description":"now"}},` +
		`{"type":"custom","custom":{"name":"code_exec","description":"runs code"}}]`
	const choice = `{"type":"function","function":{"name":"get_time"}}`
	const calls = `[{"id":"call_0","type":"function","function":{"name":"get_time","arguments":""}}]`
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, nil)
	req := testRequest()
	req.Messages = append(req.Messages,
		Message{Role: "assistant", ToolCalls: json.RawMessage(calls)},
		Message{Role: "tool", ToolCallID: "call_0", Content: "12:00"})
	req.Tools, req.ToolChoice = json.RawMessage(tools), json.RawMessage(choice)
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			_, err = p.CompleteStream(context.Background(), req, nil)
		} else {
			_, err = p.Complete(context.Background(), req)
		}
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		var got struct {
			Messages []struct {
				ToolCalls json.RawMessage `json:"tool_calls"`
			} `json:"messages"`
			Tools      json.RawMessage `json:"tools"`
			ToolChoice json.RawMessage `json:"tool_choice"`
		}
		body := c.last(t)
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("stream %v: body %s: %v", stream, body, err)
		}
		if string(got.Tools) != tools {
			t.Errorf("stream %v: tools sent as %s\nwant as the caller sent them %s", stream, got.Tools, tools)
		}
		if bytes.Contains(body, []byte(`"parameters":null`)) {
			t.Errorf("stream %v: a tool without parameters sent with \"parameters\": null: %s", stream, body)
		}
		if string(got.ToolChoice) != choice {
			t.Errorf("stream %v: tool_choice sent as %s, want %s", stream, got.ToolChoice, choice)
		}
		if len(got.Messages) != 4 || string(got.Messages[2].ToolCalls) != calls {
			t.Errorf("stream %v: the assistant's tool calls sent as %s, want %s", stream, body, calls)
		}
	}
}
