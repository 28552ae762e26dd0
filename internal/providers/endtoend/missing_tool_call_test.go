package endtoend_test

import (
	"context"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/routerhq/router/internal/race"
)

// vLLM ends a stream with finish_reason "tool_calls" and no tool call when
// its tool parser fails on the model's text (the call stays in the content).
// That answer won the job, and a caller branching on the finish reason ran a
// null tool_calls. Now the attempt fails as the provider's fault (the
// adapter fails it, and chat.Judge refuses it too: either alone fails over)
// and the job fails over to the next target, whose real call the caller
// gets. Found by review.
func TestToolCallFinishWithoutCallFailsOver(t *testing.T) {
	unparsed := openAIStream(t,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"},"finish_reason":null}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":12,"total_tokens":22}}`,
		"[DONE]")
	called := openAIStream(t,
		`{"id":"gen-2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}`,
		`{"id":"gen-2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		"[DONE]")
	srv, db := serve(t, map[string]*race.Target{
		"vllm":   openAITarget(t, "vllm", unparsed),
		"called": openAITarget(t, "called", called),
	}, "vllm", "called")
	client := oai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(callerKey), option.WithMaxRetries(0))
	resp, err := client.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model:    "default",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("weather in Paris?")},
		Tools: []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"}})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0]; c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].ID != "call_1" {
		t.Fatalf("answer %+v, want the fallback's call", c)
	}
	var state string
	if err := db.Pool.QueryRow(context.Background(),
		`SELECT state FROM attempts WHERE provider = 'vllm'`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	// failed by the adapter (malformed); invalid where only chat.Judge
	// refuses it (another adapter), which fails over all the same.
	if state != "failed" && state != "invalid" {
		t.Fatalf("the attempt without a call is %s, want failed", state)
	}
}
