package providers

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// parallel_tool_calls false goes to Anthropic as tool_choice's
// disable_parallel_tool_use, on the caller's tool_choice or on "auto" when
// it sent none; it was dropped. Found by review.
func TestAnthropicSendsParallelToolCallsFalse(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok", InputTokens: 3, OutputTokens: 1}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	off, on := false, true
	for _, c := range []struct {
		choice   string
		parallel *bool
		want     map[string]any
	}{
		{"", &off, map[string]any{"type": "auto", "disable_parallel_tool_use": true}},
		{`"required"`, &off, map[string]any{"type": "any", "disable_parallel_tool_use": true}},
		{`{"type":"function","function":{"name":"get_weather"}}`, &off, map[string]any{"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true}},
		{`"auto"`, &on, map[string]any{"type": "auto"}},
		{`"required"`, nil, map[string]any{"type": "any"}},
		{"", nil, nil},
	} {
		req := toolRequest()
		req.ToolChoice, req.ParallelToolCalls = nil, c.parallel
		if c.choice != "" {
			req.ToolChoice = json.RawMessage(c.choice)
		}
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		got := srv.Requests()
		tc, _ := got[len(got)-1].Body["tool_choice"].(map[string]any)
		if !reflect.DeepEqual(tc, c.want) {
			t.Errorf("tool_choice %s, parallel_tool_calls %v: sent %v, want %v", c.choice, c.parallel, tc, c.want)
		}
	}
}

// verbosity and chat_template_kwargs have no counterpart in the Messages API:
// a request that sets either is refused by the adapter before sending, as
// the request's fault (not the target's) that another target may take.
func TestAnthropicRefusesVerbosityAndTemplateKwargs(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok", InputTokens: 3, OutputTokens: 1}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	for _, set := range []func(*Request){
		func(r *Request) { r.Verbosity = "low" },
		func(r *Request) { r.ChatTemplateKwargs = json.RawMessage(`{"enable_thinking":false}`) },
	} {
		req := testRequest()
		set(req)
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = p.CompleteStream(context.Background(), req, nil)
			} else {
				_, err = p.Complete(context.Background(), req)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindBadRequest || pe.Action != ActionFailover || pe.Fault != FaultCaller {
				t.Errorf("stream %v: err %v, want a bad_request failed over", stream, err)
			}
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// An assistant turn's refusal is what it said: sent to Anthropic as the
// turn's text, where it was dropped (and a turn of a refusal alone left
// out, merging the user turns around it).
func TestAnthropicSendsRefusalAsAssistantText(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok", InputTokens: 3, OutputTokens: 1}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := testRequest()
	req.Messages = append(req.Messages, Message{Role: "assistant", Refusal: "I can't help with that."}, Message{Role: "user", Content: "why?"})
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs, _ := srv.Requests()[0].Body["messages"].([]any)
	want := []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "I can't help with that."}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "why?"}}},
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("messages %v, want %v", msgs, want)
	}
}
