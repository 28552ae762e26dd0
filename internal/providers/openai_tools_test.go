package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const toolsJSON = `[{"type":"function","function":{"name":"get_weather","description":"Weather in a city",
"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

func toolRequest() *Request {
	r := testRequest()
	r.Messages = append(r.Messages,
		Message{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]`)},
		Message{Role: "tool", ToolCallID: "call_0", Content: `{"temp_c":3}`},
		Message{Role: "user", Content: "and in Paris?"})
	r.Tools = json.RawMessage(toolsJSON)
	r.ToolChoice = json.RawMessage(`"auto"`)
	return r
}

// Tools, tool choice and the tool turns of a conversation reach the provider as
// OpenAI defines them; the answer's tool calls come back whole.
func TestOpenAIToolsPassThrough(t *testing.T) {
	var got map[string]any
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"chatcmpl-t","object":"chat.completion","created":1700000000,"model":"gpt-test",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
"function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}`))
	})
	resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), toolRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != "tool_calls" || !strings.Contains(string(resp.ToolCalls), `"name":"get_weather"`) ||
		!strings.Contains(string(resp.ToolCalls), `{\"city\":\"Paris\"}`) {
		t.Fatalf("response %+v tool calls %s", resp, resp.ToolCalls)
	}
	tools, _ := got["tools"].([]any)
	if len(tools) != 1 || got["tool_choice"] != "auto" {
		t.Fatalf("request tools %v choice %v", got["tools"], got["tool_choice"])
	}
	msgs := got["messages"].([]any)
	assistant, tool := msgs[2].(map[string]any), msgs[3].(map[string]any)
	if _, ok := assistant["tool_calls"]; !ok || tool["tool_call_id"] != "call_0" || tool["role"] != "tool" {
		t.Fatalf("tool turns %v / %v", assistant, tool)
	}
}

// A streamed tool call arrives in pieces (name first, then argument fragments);
// the adapter assembles it.
func TestOpenAIStreamAssemblesToolCalls(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Rome\"}"}}]}}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`)
	})
	resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), toolRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(resp.ToolCalls, &calls); err != nil || len(calls) != 1 {
		t.Fatalf("tool calls %s (%v)", resp.ToolCalls, err)
	}
	if calls[0].ID != "call_9" || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Rome"}` {
		t.Fatalf("assembled %+v", calls[0])
	}
}
