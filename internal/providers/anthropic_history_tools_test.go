package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// historyCall is an assistant turn calling name, and the tool message that
// answers it.
func historyCall(id, name string) []Message {
	return []Message{
		{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":"{}"}}]`)},
		{Role: "tool", ToolCallID: id, Content: "done"},
	}
}

// sentTools is the tools and tool_choice messageParams sends for req.
func sentTools(t *testing.T, req *Request) (tools []map[string]any, choice map[string]any) {
	t.Helper()
	params, e := newAnthropicAdapter(t, "http://127.0.0.1:1", nil).messageParams(req)
	if e != nil {
		t.Fatal(e)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools      []map[string]any `json:"tools"`
		ToolChoice map[string]any   `json:"tool_choice"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Tools, body.ToolChoice
}

func toolNames(tools []map[string]any) []string {
	var names []string
	for _, tl := range tools {
		names = append(names, fmt.Sprint(tl["name"]))
	}
	return names
}

// A history with tool calls in a request that offers no tools declares the
// tools the history names — each once, in order, with an input schema of any
// object — and sends tool_choice none: Anthropic takes the request, and the
// model answers in text, as the caller offered no tool.
func TestAnthropicHistoryToolsDeclared(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "weather and time in Paris?"}}
	msgs = append(msgs, historyCall("call_1", "weather")...)
	msgs = append(msgs, historyCall("call_2", "clock")...)
	msgs = append(msgs, historyCall("call_3", "weather")...)
	msgs = append(msgs, Message{Role: "user", Content: "Summarise."})
	tools, choice := sentTools(t, &Request{Messages: msgs})
	if got := strings.Join(toolNames(tools), ","); got != "weather,clock" {
		t.Errorf("tools %s, want weather,clock", got)
	}
	for _, tl := range tools {
		if s, _ := json.Marshal(tl["input_schema"]); string(s) != `{"properties":{},"type":"object"}` || len(tl) != 2 {
			t.Errorf("tool %v, want its name and an input schema of any object", tl)
		}
	}
	if fmt.Sprint(choice) != "map[type:none]" {
		t.Errorf("tool_choice %v, want {\"type\":\"none\"}", choice)
	}
	// The caller's own tool_choice, however it came without tools, cannot
	// call a tool the caller did not offer.
	tools, choice = sentTools(t, &Request{Messages: msgs, ToolChoice: json.RawMessage(`"auto"`)})
	if len(tools) != 2 || fmt.Sprint(choice) != "map[type:none]" {
		t.Errorf("tool_choice auto without tools: tools %v, tool_choice %v, want the history's tools and none", toolNames(tools), choice)
	}
}

// Only a history with tool blocks gets tools, and only when the request
// offers none: the caller's tools and tool_choice are sent as they were.
func TestAnthropicHistoryToolsOnlyWithoutTools(t *testing.T) {
	if tools, choice := sentTools(t, testRequest()); tools != nil || choice != nil {
		t.Errorf("no tool history: tools %v, tool_choice %v, want neither", tools, choice)
	}
	msgs := append([]Message{{Role: "user", Content: "weather?"}}, historyCall("call_1", "weather")...)
	req := &Request{Messages: msgs, Tools: json.RawMessage(`[{"type":"function","function":{"name":"lookup"}}]`)}
	if tools, choice := sentTools(t, req); strings.Join(toolNames(tools), ",") != "lookup" || choice != nil {
		t.Errorf("the caller's tools: tools %v, tool_choice %v, want lookup alone and no tool_choice", toolNames(tools), choice)
	}
}

// A name Anthropic refuses as a tool's (past 64 characters; chat lets a
// history call's name be any length) is not declared; with no name left, a
// placeholder tool is, since any tool satisfies the rule. At most
// maxHistoryTools are declared.
func TestAnthropicHistoryToolsNames(t *testing.T) {
	long := strings.Repeat("a", 65)
	msgs := append([]Message{{Role: "user", Content: "go"}}, historyCall("call_1", long)...)
	tools, choice := sentTools(t, &Request{Messages: msgs})
	if got := strings.Join(toolNames(tools), ","); got != historyToolPlaceholder || fmt.Sprint(choice) != "map[type:none]" {
		t.Errorf("a name past 64 characters: tools %s, tool_choice %v, want %s alone and none", got, choice, historyToolPlaceholder)
	}
	msgs = append(msgs, historyCall("call_2", "weather")...)
	if got := strings.Join(toolNames(first(sentTools(t, &Request{Messages: msgs}))), ","); got != "weather" {
		t.Errorf("tools %s, want weather alone", got)
	}
	msgs = []Message{{Role: "user", Content: "go"}}
	for i := range maxHistoryTools + 5 {
		msgs = append(msgs, historyCall(fmt.Sprintf("call_%d", i), fmt.Sprintf("tool_%d", i))...)
	}
	names := toolNames(first(sentTools(t, &Request{Messages: msgs})))
	if len(names) != maxHistoryTools || names[0] != "tool_0" || names[maxHistoryTools-1] != fmt.Sprintf("tool_%d", maxHistoryTools-1) {
		t.Errorf("%d tools declared (first %v), want the first %d", len(names), names[:1], maxHistoryTools)
	}
}

func first[A, B any](a A, _ B) A { return a }

// Sent to the fake (which refuses tool blocks without tools, as the Messages
// API does), streamed or not, the request is taken and answered in text.
func TestAnthropicHistoryToolsTaken(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "It is sunny.", InputTokens: 30, OutputTokens: 4}))
	msgs := append([]Message{{Role: "user", Content: "weather?"}}, historyCall("call_1", "weather")...)
	msgs = append(msgs, Message{Role: "user", Content: "Summarise."})
	for _, stream := range []bool{false, true} {
		resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), &Request{Messages: msgs})
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if resp.Content != "It is sunny." || len(resp.ToolCalls) != 0 {
			t.Errorf("stream=%v: content %q, tool calls %s", stream, resp.Content, resp.ToolCalls)
		}
	}
}
