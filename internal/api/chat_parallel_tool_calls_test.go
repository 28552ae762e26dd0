package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/providers"
)

// keyed sends every request with an Idempotency-Key.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Idempotency-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// keyedClient is a go-openai client whose requests carry Idempotency-Key key.
func (b *bundle) keyedClient(key string) *openai.Client {
	cfg := openai.DefaultConfig(acmeKey)
	cfg.BaseURL = b.srv.URL + "/v1"
	cfg.HTTPClient = &http.Client{Transport: keyed{key}}
	return openai.NewClientWithConfig(cfg)
}

func apiError(err error) *openai.APIError {
	var e *openai.APIError
	errors.As(err, &e)
	return e
}

const parallelCalls = `[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
	`{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]`

func weatherRequest(parallel bool) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: "default",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "weather in Paris and Oslo?"}},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_weather",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
		ParallelToolCalls: parallel}
}

// parallel_tool_calls was ignored: an answer of two tool calls reached a
// caller that sent false, and the same Idempotency-Key with it flipped
// replayed the other answer. Now two calls to false are the provider's fault
// (the race fails over to a target that makes one), and the flag is part of
// the intent (409). So are verbosity and chat_template_kwargs. Found by
// review.
func TestChatParallelToolCallsFalseIsHeldToOneCall(t *testing.T) {
	const oneCall = `[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`
	b := setup(t, options{
		respond: func(_ int, req *providers.Request) providers.Step {
			if len(req.Tools) == 0 {
				return providers.Step{Output: "hello"}
			}
			return providers.Step{ToolCalls: parallelCalls}
		},
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{ToolCalls: oneCall} },
	})
	ctx := context.Background()
	c := b.keyedClient("ptc-1")
	resp, err := c.CreateChatCompletion(ctx, weatherRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	if calls := resp.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].ID != "call_9" || resp.Model != "m2" {
		t.Fatalf("parallel_tool_calls false answered with %d calls by %s: %+v", len(calls), resp.Model, calls)
	}
	again, err := c.CreateChatCompletion(ctx, weatherRequest(false))
	if err != nil || again.ID != resp.ID {
		t.Fatalf("the same request again: %v, id %q want %q", err, again.ID, resp.ID)
	}
	_, err = c.CreateChatCompletion(ctx, weatherRequest(true))
	if e := apiError(err); e == nil || e.HTTPStatusCode != http.StatusConflict || e.Code != "idempotency_key_reused" {
		t.Fatalf("the same key with parallel_tool_calls true: %v, want 409 idempotency_key_reused", err)
	}
	// Allowed, two calls win.
	both, err := b.keyedClient("ptc-2").CreateChatCompletion(ctx, weatherRequest(true))
	if err != nil || len(both.Choices[0].Message.ToolCalls) != 2 {
		t.Fatalf("parallel_tool_calls true: %v %+v, want the two calls", err, both)
	}
	for i, set := range []func(*openai.ChatCompletionRequest, int){
		func(r *openai.ChatCompletionRequest, i int) { r.Verbosity = []string{"low", "high"}[i] },
		func(r *openai.ChatCompletionRequest, i int) {
			r.ChatTemplateKwargs = map[string]any{"enable_thinking": i == 1}
		},
	} {
		c := b.keyedClient(fmt.Sprint("verbosity-", i))
		first := openai.ChatCompletionRequest{Model: "default", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
		second := first
		set(&first, 0)
		set(&second, 1)
		if _, err := c.CreateChatCompletion(ctx, first); err != nil {
			t.Fatal(err)
		}
		_, err := c.CreateChatCompletion(ctx, second)
		if e := apiError(err); e == nil || e.HTTPStatusCode != http.StatusConflict {
			t.Fatalf("the same key with another verbosity or chat_template_kwargs: %v, want 409", err)
		}
	}
	// Without tools it is refused, as OpenAI refuses it.
	noTools := weatherRequest(false)
	noTools.Tools = nil
	_, err = b.client(acmeKey).CreateChatCompletion(ctx, noTools)
	if e := apiError(err); e == nil || e.HTTPStatusCode != http.StatusBadRequest || e.Param == nil || *e.Param != "parallel_tool_calls" {
		t.Fatalf("parallel_tool_calls without tools: %v, want 400 naming it", err)
	}
}

// The three fields reach the provider as the caller sent them: parsed and
// fingerprinted is not enough if the attempt's request leaves them out.
func TestChatParallelToolCallsVerbosityAndKwargsReachTheProvider(t *testing.T) {
	b := setup(t, options{})
	req := weatherRequest(false)
	req.Verbosity = "low"
	req.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
	if _, err := b.keyedClient("forwarded").CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	reqs := b.primary.Requests()
	if len(reqs) == 0 {
		t.Fatal("the provider was not called")
	}
	got := reqs[0]
	if got.ParallelToolCalls == nil || *got.ParallelToolCalls || got.Verbosity != "low" || string(got.ChatTemplateKwargs) != `{"enable_thinking":false}` {
		t.Fatalf("provider request: parallel_tool_calls %v, verbosity %q, chat_template_kwargs %s; want false, low, {\"enable_thinking\":false}",
			got.ParallelToolCalls, got.Verbosity, got.ChatTemplateKwargs)
	}
}
