package providers

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// The Messages API refuses an empty text block (400 "text content blocks
// must be non-empty") and a text block of whitespace alone ("… must contain
// non-whitespace text"). An empty system or developer message and an empty
// tool result were sent as {"type":"text","text":""}, and blank assistant
// text as a block of its own: a conversation an OpenAI target answers failed
// on an Anthropic one as the caller's bad request. Found by review.
func TestAnthropicSendsNoBlankTextBlocks(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok"}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	calls := json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]`)
	for _, c := range []struct {
		name       string
		messages   []Message
		wantSystem any // nil: no system prompt sent
		want       []any
	}{{
		name: "blank system and developer messages",
		messages: []Message{
			{Role: "system", Content: ""}, {Role: "developer", Content: " \n\t"}, {Role: "system", Content: "be brief"},
			{Role: "user", Content: "hi"},
		},
		wantSystem: []any{text("be brief")},
		want:       []any{map[string]any{"role": "user", "content": []any{text("hi")}}},
	}, {
		name:     "only blank system messages",
		messages: []Message{{Role: "system", Content: ""}, {Role: "user", Content: "hi"}},
		want:     []any{map[string]any{"role": "user", "content": []any{text("hi")}}},
	}, {
		name: "empty and blank tool results, blank text beside them",
		messages: []Message{
			{Role: "user", Content: "run f twice"},
			{Role: "assistant", Content: "  ", ToolCalls: calls},
			{Role: "tool", ToolCallID: "call_1", Content: ""},
			{Role: "tool", ToolCallID: "call_2", Content: "\n"},
			{Role: "user", Content: " "},
		},
		want: []any{
			map[string]any{"role": "user", "content": []any{text("run f twice")}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "tool_use", "id": "call_1", "name": "f", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "call_1", "is_error": false},
				map[string]any{"type": "tool_result", "tool_use_id": "call_2", "is_error": false}}},
		},
	}, {
		name: "blank assistant text alone: its turn is not sent, the user turns join",
		messages: []Message{
			{Role: "user", Content: "one"}, {Role: "assistant", Content: "\n\n"}, {Role: "user", Content: "two"},
		},
		want: []any{map[string]any{"role": "user", "content": []any{text("one"), text("two")}}},
	}, {
		name: "blank user text beside other text",
		messages: []Message{
			{Role: "user", Content: " "}, {Role: "user", Content: "hi"},
		},
		want: []any{map[string]any{"role": "user", "content": []any{text("hi")}}},
		// A user turn of blank text alone is refused before sending:
		// TestAnthropicBlankUserTurnRefused.
	}} {
		for _, stream := range []bool{false, true} {
			req := &Request{Messages: c.messages}
			var err error
			if stream {
				_, err = p.CompleteStream(context.Background(), req, nil)
			} else {
				_, err = p.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			rs := srv.Requests()
			b := rs[len(rs)-1].Body
			if !reflect.DeepEqual(b["system"], c.wantSystem) {
				gj, _ := json.Marshal(b["system"])
				t.Errorf("%s (stream %v): system %s", c.name, stream, gj)
			}
			if !reflect.DeepEqual(b["messages"], c.want) {
				gj, _ := json.Marshal(b["messages"])
				wj, _ := json.Marshal(c.want)
				t.Errorf("%s (stream %v): messages\n got %s\nwant %s", c.name, stream, gj, wj)
			}
		}
	}
}
