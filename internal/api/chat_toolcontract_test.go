package api_test

import (
	"context"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/providers"
)

// contractTools are the functions the tool-contract requests offer: book is
// strict (its arguments must be {"city": <string>} and nothing else).
var contractTools = []openai.Tool{
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_weather",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_time",
		Parameters: map[string]any{"type": "object"}}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "book", Strict: true,
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []string{"city"}, "additionalProperties": false}}},
}

// oneCall is an answer of one call to function name with arguments args (a
// JSON string's contents, escaped).
func oneCall(id, name, args string) string {
	return `[{"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":"` + args + `"}}]`
}

// A provider's tool calls were judged by their shape alone: a call cut short
// ({"city": "Par), a call to a function the request did not offer, one
// tool_choice forbade or named another, no call when tool_choice required
// one, arguments a strict tool's parameters reject — each reached the caller
// as a success. Each is the provider's fault now: the route's fallback is
// asked, and the caller gets its answer (SPEC §4.3). Found by review.
func TestChatToolCallsBreakingTheContractFailOver(t *testing.T) {
	const good = `[{"id":"call_ok","type":"function","function":{"name":"get_time","arguments":"{}"}}]`
	cases := []struct {
		name    string
		choice  any
		primary providers.Step
		// fallback answers with a call to get_time unless text is set.
		text bool
	}{
		{"cut arguments", nil, providers.Step{ToolCalls: oneCall("call_bad", "get_weather", `{\"city\": \"Par`)}, false},
		{"function not offered", nil, providers.Step{ToolCalls: oneCall("call_bad", "launch", `{}`)}, false},
		{"strict arguments invalid", nil, providers.Step{ToolCalls: oneCall("call_bad", "book", `{\"town\":\"Oslo\"}`)}, false},
		{"required without a call", "required", providers.Step{Output: "I would rather not."}, false},
		{"named, another called", openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "get_time"}},
			providers.Step{ToolCalls: oneCall("call_bad", "get_weather", `{}`)}, false},
		{"none with a call", "none", providers.Step{ToolCalls: oneCall("call_bad", "get_time", `{}`)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t, options{
				respond: func(int, *providers.Request) providers.Step { return c.primary },
				fallback: func(int, *providers.Request) providers.Step {
					if c.text {
						return providers.Step{Output: "It is noon."}
					}
					return providers.Step{ToolCalls: good}
				},
			})
			req := openai.ChatCompletionRequest{Model: "default", Tools: contractTools, ToolChoice: c.choice,
				Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "what time is it?"}}}
			resp, err := b.client(acmeKey).CreateChatCompletion(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			msg := resp.Choices[0].Message
			if resp.Model != "m2" {
				t.Fatalf("answered by %s: %+v, want the fallback's answer", resp.Model, msg)
			}
			if c.text && (msg.Content != "It is noon." || len(msg.ToolCalls) != 0) ||
				!c.text && (len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "call_ok") {
				t.Fatalf("answer %+v, want the fallback's", msg)
			}
		})
	}
	// Streamed, the cut call never reaches the caller either.
	b := setup(t, options{
		respond:  func(int, *providers.Request) providers.Step { return cases[0].primary },
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{ToolCalls: good} },
	})
	stream, err := b.client(acmeKey).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: "default",
		Tools: contractTools, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "weather?"}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ch := range drain(t, stream) {
		for _, choice := range ch.Choices {
			for _, call := range choice.Delta.ToolCalls {
				if call.ID != "" {
					ids = append(ids, call.ID)
				}
			}
		}
	}
	if len(ids) != 1 || ids[0] != "call_ok" {
		t.Fatalf("streamed calls %v, want only the fallback's call_ok", ids)
	}
}

// What is no request is refused with a 400 naming the field, in OpenAI's
// error shape: response_format without a type, a tool_choice object without
// a valid type or naming a function not offered, a strict tool whose
// parameters do not compile, a user message whose content is null.
func TestChatRefusesBrokenFormatsAndToolContracts(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "hello"} }})
	ctx := context.Background()
	base := func() openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Model: "default", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	}
	for _, c := range []struct {
		name  string
		set   func(*openai.ChatCompletionRequest)
		param string
	}{
		{"response_format {}", func(r *openai.ChatCompletionRequest) { r.ResponseFormat = &openai.ChatCompletionResponseFormat{} }, "response_format.type"},
		{"tool_choice {}", func(r *openai.ChatCompletionRequest) { r.Tools, r.ToolChoice = contractTools, map[string]any{} }, "tool_choice"},
		{"tool_choice names a function not offered", func(r *openai.ChatCompletionRequest) {
			r.Tools, r.ToolChoice = contractTools, openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "launch"}}
		}, "tool_choice"},
		{"strict parameters that do not compile", func(r *openai.ChatCompletionRequest) {
			r.Tools = []openai.Tool{contractTools[0], {Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "g", Strict: true,
				Parameters: map[string]any{"type": "nope"}}}}
		}, "tools[1].function.parameters"},
	} {
		req := base()
		c.set(&req)
		_, err := b.client(acmeKey).CreateChatCompletion(ctx, req)
		e := apiError(err)
		if e == nil || e.HTTPStatusCode != http.StatusBadRequest || e.Type != "invalid_request_error" || e.Param == nil || *e.Param != c.param {
			t.Errorf("%s: %v, want 400 invalid_request_error naming %s", c.name, err, c.param)
		}
	}
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":null}]}`)
	if typ, _, param, _ := openAIErr(r); r.status != http.StatusBadRequest || typ != "invalid_request_error" || param != "messages[0].content" {
		t.Errorf("user content null: status %d body %s, want 400 naming messages[0].content", r.status, r.raw)
	}
	if n := len(b.primary.Requests()); n != 0 {
		t.Fatalf("the provider was called %d times for refused requests", n)
	}
}

// response_format.json_schema.description was dropped before the provider
// (and from the stored intent): it reaches the provider now.
func TestChatResponseFormatDescriptionReachesTheProvider(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: `{"city":"Oslo"}`} }})
	req := openai.ChatCompletionRequest{Model: "default", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "a city?"}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "city", Description: "one city of Norway",
				Schema: rawSchema(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}}
	if _, err := b.client(acmeKey).CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	reqs := b.primary.Requests()
	if len(reqs) == 0 || reqs[0].ResponseFormat == nil || reqs[0].ResponseFormat.Description != "one city of Norway" {
		t.Fatalf("provider requests %+v, want the description sent", reqs)
	}
}

// rawSchema is a json.Marshaler of a schema's JSON text.
type rawSchema string

func (s rawSchema) MarshalJSON() ([]byte, error) { return []byte(s), nil }
