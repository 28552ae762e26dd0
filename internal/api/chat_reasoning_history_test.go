package api_test

import (
	"context"
	"net/http"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/providers"
)

// docs/chat.md: "A provider's reasoning comes back on the completion's
// message as reasoning_content" (DeepSeek's reasoner, vLLM, SGLang). A tool
// loop with such a model sends that assistant message back on the next turn,
// as go-openai does (ChatCompletionMessage.ReasoningContent). DeepSeek's
// thinking mode (on by default) requires it: "For turns that do perform tool
// calls, the reasoning_content must be fully passed back to the API in all
// subsequent requests ... the API will return a 400 error" (and Moonshot's
// kimi-k2-thinking likewise). The router read no reasoning_content from the
// caller's messages, so the second turn of every such tool loop reached the
// provider without it. It is sent to a provider with send_reasoning_content
// only (SendReasoningContent): others refuse the member. Found by review
// (rchat4 #1).
func TestReasoningContentInHistoryReachesProvider(t *testing.T) {
	const reasoning = "The user wants the weather; call get_weather for Paris."
	rig := setupOpenAIUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		if msgs, _ := body["messages"].([]any); len(msgs) > 1 {
			upstreamSSE(w, upstreamChunk(`{"role":"assistant","content":"It is 11C in Paris."}`, ""), upstreamChunk(`{}`, "stop"))
			return
		}
		upstreamSSE(w,
			upstreamChunk(`{"role":"assistant","content":"","reasoning_content":"The user wants the weather; call get_weather for Paris."}`, ""),
			upstreamChunk(`{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`, ""),
			upstreamChunk(`{}`, "tool_calls"))
	}, func(cfg *providers.OpenAIConfig) { cfg.SendReasoningContent = true })
	c := goOpenAI(rig.srv)
	req := goopenai.ChatCompletionRequest{Model: "default",
		Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "weather in Paris?"}},
		Tools: []goopenai.Tool{{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: "get_weather", Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}}
	first, err := c.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	msg := first.Choices[0].Message
	if msg.ReasoningContent != reasoning || len(msg.ToolCalls) != 1 {
		t.Fatalf("first turn: %+v", msg)
	}
	// The tool loop: the assistant's message as received, then the tool's result.
	req.Messages = append(req.Messages, msg, goopenai.ChatCompletionMessage{Role: "tool", ToolCallID: msg.ToolCalls[0].ID, Content: `{"temp_c":11}`})
	if _, err := c.CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	sent := rig.upstream.requests()
	if len(sent) != 2 {
		t.Fatalf("%d upstream requests, want 2", len(sent))
	}
	turns, _ := sent[1]["messages"].([]any)
	if len(turns) != 3 {
		t.Fatalf("second request sent %d messages, want 3: %v", len(turns), turns)
	}
	asst, _ := turns[1].(map[string]any)
	if got, _ := asst["reasoning_content"].(string); got != reasoning {
		t.Fatalf("the assistant turn reached the provider without its reasoning_content (got %q): %v", got, asst)
	}
}
