package api_test

// These tests drive the chat-completions endpoint with the official OpenAI Go
// SDK (github.com/openai/openai-go/v3), the client users actually run, so the
// drop-in claim is checked by it rather than by hand-written HTTP.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/routerhq/router/internal/providers"
)

func (b *bundle) sdk(apiKey string) oai.Client {
	return oai.NewClient(option.WithBaseURL(b.srv.URL+"/v1/"), option.WithAPIKey(apiKey), option.WithMaxRetries(0))
}

func sdkParams(content string) oai.ChatCompletionNewParams {
	return oai.ChatCompletionNewParams{Model: "default", Messages: []oai.ChatCompletionMessageParamUnion{
		oai.SystemMessage("You answer briefly."), oai.UserMessage(content)}}
}

func TestSDKChatPlainAndStreaming(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "Hello from the router, in a sentence long enough to need several stream chunks.",
			Usage: &providers.Usage{PromptTokens: 11, CompletionTokens: 17, TotalTokens: 28}}
	}})
	c := b.sdk(acmeKey)
	var raw *http.Response
	resp, err := c.Chat.Completions.New(context.Background(), sdkParams("hi"), option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Choices[0].Message.Content, "Hello from the router") || resp.Model != "m1" ||
		resp.Usage.TotalTokens != 28 || resp.Choices[0].FinishReason != "stop" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Fatalf("response %+v", resp)
	}
	if raw.Header.Get("X-Router-Job-Id") == "" {
		t.Fatal("no X-Router-Job-Id header")
	}

	p := sdkParams("stream please")
	p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(context.Background(), p)
	defer stream.Close()
	var acc oai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		chunks++
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != resp.Choices[0].Message.Content ||
		acc.Choices[0].FinishReason != "stop" || chunks < 4 {
		t.Fatalf("stream: %+v in %d chunks", acc.Choices, chunks)
	}
	if acc.Usage.TotalTokens != 28 || acc.Model != "m1" {
		t.Fatalf("stream usage %+v model %q", acc.Usage, acc.Model)
	}

	models, err := c.Models.List(context.Background())
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "default" {
		t.Fatalf("models %+v %v", models, err)
	}
}

func TestSDKChatTools(t *testing.T) {
	const calls = `[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{ToolCalls: calls}
	}})
	c := b.sdk(acmeKey)
	p := sdkParams("weather in Paris?")
	p.Tools = []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})}
	p.ToolChoice = oai.ToolChoiceOptionFunctionToolChoice(oai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})
	resp, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if resp.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" ||
		msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || msg.ToolCalls[0].ID != "call_1" {
		t.Fatalf("answer %+v", resp.Choices[0])
	}
	sent := b.primary.Requests()[0]
	if !strings.Contains(string(sent.Tools), "get_weather") || !strings.Contains(string(sent.ToolChoice), "get_weather") {
		t.Fatalf("tools did not reach the provider: %s / %s", sent.Tools, sent.ToolChoice)
	}

	// The conversation goes on, streamed, with the tool's result.
	p.Messages = append(p.Messages, msg.ToParam(), oai.ToolMessage(`{"temp_c":11}`, "call_1"))
	stream := c.Chat.Completions.NewStreaming(context.Background(), p)
	defer stream.Close()
	var acc oai.ChatCompletionAccumulator
	var finished []oai.FinishedChatCompletionToolCall
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(finished) != 1 || finished[0].Name != "get_weather" || finished[0].Arguments != `{"city":"Paris"}` {
		t.Fatalf("streamed tool calls %+v", finished)
	}
	turns := b.primary.Requests()[1].Messages
	if last := turns[len(turns)-1]; last.Role != "tool" || last.ToolCallID != "call_1" || len(turns[len(turns)-2].ToolCalls) == 0 {
		t.Fatalf("tool turns did not reach the provider: %+v", turns)
	}
}

func TestSDKChatJSONSchemaAndErrors(t *testing.T) {
	b := setup(t, options{
		respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: `{"answer": 42, "extra": true}`}
		},
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: `{"answer": "forty-two"}`} },
	})
	c := b.sdk(acmeKey)
	p := sdkParams("what is the answer?")
	p.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Strict: oai.Bool(true),
			Schema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}},
				"required": []string{"answer"}, "additionalProperties": false}}}}
	resp, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != `{"answer": "forty-two"}` || resp.Model != "m2" {
		t.Fatalf("schema-valid answer expected from the fallback: %+v", resp)
	}
	if sent := b.primary.Requests()[0].ResponseFormat; sent == nil || sent.Type != "json_schema" || !strings.Contains(string(sent.Schema), "answer") {
		t.Fatalf("the schema did not reach the provider: %+v", sent)
	}

	unknown := sdkParams("x")
	unknown.Model = "no-such-route"
	_, err = c.Chat.Completions.New(context.Background(), unknown)
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || apiErr.Message == "" {
		t.Fatalf("unknown model: %v", err)
	}
	wrong := b.sdk("wrong-key")
	_, err = wrong.Chat.Completions.New(context.Background(), sdkParams("x"))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Fatalf("wrong key: %v", err)
	}
}

func TestSDKChatIdempotentReplay(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "charged once"}
	}})
	c := b.sdk(acmeKey)
	key := option.WithHeader("Idempotency-Key", "sdk-charge-1")
	var first, second *http.Response
	r1, err := c.Chat.Completions.New(context.Background(), sdkParams("charge the card"), key, option.WithResponseInto(&first))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := c.Chat.Completions.New(context.Background(), sdkParams("charge the card"), key, option.WithResponseInto(&second))
	if err != nil {
		t.Fatal(err)
	}
	if r1.ID != r2.ID || r2.Choices[0].Message.Content != "charged once" || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %s vs %s, header %q", r1.ID, r2.ID, second.Header.Get("Idempotent-Replayed"))
	}
	if first.Header.Get("X-Router-Job-Id") != second.Header.Get("X-Router-Job-Id") {
		t.Fatal("replay answered from another job")
	}
	if b.primary.Calls() != 1 {
		t.Fatalf("provider calls = %d, want 1", b.primary.Calls())
	}
	_, err = c.Chat.Completions.New(context.Background(), sdkParams("refund instead"), key)
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || apiErr.Code != "idempotency_key_reused" {
		t.Fatalf("reused key with another request: %v", err)
	}
}
