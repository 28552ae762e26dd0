package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/providers"
)

func (b *bundle) client(apiKey string) *openai.Client {
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = b.srv.URL + "/v1"
	return openai.NewClientWithConfig(cfg)
}

// drain reads a stream to its end, failing the test on any error but io.EOF.
func drain(t *testing.T, stream *openai.ChatCompletionStream) []openai.ChatCompletionStreamResponse {
	t.Helper()
	var out []openai.ChatCompletionStreamResponse
	for {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ch)
	}
}

func chatReq(content string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: "default", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "You answer briefly."}, {Role: "user", Content: content}}}
}

// Issue 5, acceptance 1: go-openai's own client, plain and streaming.
func TestChatWithGoOpenAIClient(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "Hello from the router, in a sentence long enough to need several stream chunks.",
			Usage: &providers.Usage{PromptTokens: 11, CompletionTokens: 17, TotalTokens: 28}}
	}})
	c := b.client(acmeKey)
	resp, err := c.CreateChatCompletion(context.Background(), chatReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Choices[0].Message.Content, "Hello from the router") || resp.Model != "m1" ||
		resp.Usage.TotalTokens != 28 || resp.Choices[0].FinishReason != "stop" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Fatalf("response %+v", resp)
	}
	if id := resp.Header().Get("X-Router-Job-Id"); id == "" || resp.ID != "chatcmpl-"+strings.ReplaceAll(id, "-", "") {
		t.Fatalf("completion id %q is not its job's (X-Router-Job-Id %q): replays must be identical", resp.ID, id)
	}

	req := chatReq("stream please")
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := c.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var content strings.Builder
	var usage *openai.Usage
	chunks, finish := 0, ""
	for _, ch := range drain(t, stream) {
		chunks++
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, choice := range ch.Choices {
			content.WriteString(choice.Delta.Content)
			if choice.FinishReason != "" {
				finish = string(choice.FinishReason)
			}
		}
	}
	if content.String() != resp.Choices[0].Message.Content || finish != "stop" || chunks < 4 {
		t.Fatalf("stream: %q finish %q in %d chunks", content.String(), finish, chunks)
	}
	if usage == nil || usage.TotalTokens != 28 {
		t.Fatalf("stream usage %+v", usage)
	}

	models, err := c.ListModels(context.Background())
	if err != nil || len(models.Models) != 1 || models.Models[0].ID != "default" {
		t.Fatalf("models %+v %v", models, err)
	}
}

// Issue 5, acceptance 1: response_format json_schema is validated; errors come
// back as go-openai's APIError.
func TestChatSchemaAndErrors(t *testing.T) {
	b := setup(t, options{
		respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: `{"answer": 42, "extra": true}`}
		},
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: `{"answer": "forty-two"}`} },
	})
	c := b.client(acmeKey)
	req := chatReq("what is the answer?")
	req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "answer", Strict: true,
			Schema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`)}}
	resp, err := c.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != `{"answer": "forty-two"}` || resp.Model != "m2" {
		t.Fatalf("schema-valid answer expected from the fallback: %+v", resp)
	}
	sent := b.primary.Requests()[0].ResponseFormat
	if sent == nil || sent.Type != "json_schema" || !strings.Contains(string(sent.Schema), "answer") {
		t.Fatalf("the schema did not reach the provider: %+v", sent)
	}

	unknown := chatReq("x")
	unknown.Model = "no-such-route"
	_, err = c.CreateChatCompletion(context.Background(), unknown)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Fatalf("unknown model: %v", err)
	}
	_, err = b.client("wrong-key").CreateChatCompletion(context.Background(), chatReq("x"))
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
		t.Fatalf("wrong key: %v", err)
	}
}

// Issue 5, acceptance 2: primary 503, the fallback answers; the client sees the
// fallback's model and usage; the failed attempt is on the job.
func TestChatFailoverShowsWinnersModelAndUsage(t *testing.T) {
	b := setup(t, options{
		respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} },
		fallback: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: "from the fallback", Usage: &providers.Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8}}
		},
	})
	resp, err := b.client(acmeKey).CreateChatCompletion(context.Background(), chatReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "m2" || resp.Usage.TotalTokens != 8 || resp.Choices[0].Message.Content != "from the fallback" {
		t.Fatalf("response %+v", resp)
	}
	job := b.do(t, "GET", "/v1/jobs/"+resp.Header().Get("X-Router-Job-Id"), acmeKey, "")
	attempts := job.body["attempts"].([]any)
	if len(attempts) != 2 || attempts[0].(map[string]any)["state"] != "failed" || attempts[1].(map[string]any)["state"] != "won" {
		t.Fatalf("attempts %s", job.raw)
	}
}

// Issue 5, acceptance 3: a cut, stalled or malformed stream never reaches the
// client as success: it gets the fallback's full answer, or a clear error.
func TestChatBrokenStreamsNeverLeak(t *testing.T) {
	for _, tc := range []struct {
		name string
		step providers.Step
	}{
		{"cut", providers.Step{Output: "PARTIAL answer that is cut", StreamCut: true}},
		{"stalled", providers.Step{Output: "PARTIAL answer that stalls", StreamStall: true}},
		{"malformed", providers.Step{Output: "PARTIAL answer with a bad chunk", StreamMalformed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, options{
				respond:  func(int, *providers.Request) providers.Step { return tc.step },
				fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: "the full answer"} },
			})
			req := chatReq("stream")
			req.Stream = true
			stream, err := b.client(acmeKey).CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, ch := range drain(t, stream) {
				for _, c := range ch.Choices {
					got.WriteString(c.Delta.Content)
				}
			}
			stream.Close()
			if got.String() != "the full answer" {
				t.Fatalf("client received %q", got.String())
			}
		})
	}
	// With no fallback, the client gets a clear error, not the partial text.
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "PARTIAL", StreamCut: true}
	}})
	req := chatReq("stream")
	req.Stream = true
	// The headers went at once (signs of life, SPEC §15): the failure comes as
	// an error event in the stream, never as content.
	stream, err := b.client(acmeKey).CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if stream.Header().Get("X-Router-Job-Id") == "" {
		t.Fatal("streamed answer without X-Router-Job-Id")
	}
	ch, err := stream.Recv()
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "upstream_failed" || !strings.Contains(apiErr.Message, "stream_cut") {
		t.Fatalf("no-fallback error: %v (chunk %+v)", err, ch)
	}
}

// Issue 5, acceptance 4: two concurrent calls with one key → one provider call,
// identical responses; a later call → a byte-identical response.
func TestChatIdempotencyKey(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 10)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		arrived <- struct{}{}
		<-release
		return providers.Step{Output: "only once"}
	}})
	body := `{"model":"default","messages":[{"role":"user","content":"charge the card"}],"some_future_field":{"x":1}}`
	post := func() (int, []byte, http.Header) {
		req, _ := http.NewRequest("POST", b.srv.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+acmeKey)
		req.Header.Set("Idempotency-Key", "charge-77")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil, nil
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw, resp.Header
	}
	var wg sync.WaitGroup
	bodies := make([][]byte, 2)
	statuses := make([]int, 2)
	for i := range 2 {
		wg.Go(func() { statuses[i], bodies[i], _ = post() })
	}
	<-arrived
	close(release)
	wg.Wait()
	if statuses[0] != 200 || statuses[1] != 200 || string(bodies[0]) != string(bodies[1]) {
		t.Fatalf("concurrent: %d %d\n%s\n%s", statuses[0], statuses[1], bodies[0], bodies[1])
	}
	status, third, hdr := post()
	if status != 200 || string(third) != string(bodies[0]) || hdr.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("later call: %d %v\n%s\n%s", status, hdr, third, bodies[0])
	}
	if b.primary.Calls() != 1 {
		t.Fatalf("provider calls = %d, want 1", b.primary.Calls())
	}
	// The same key with another request is refused, in the OpenAI shape.
	req, _ := http.NewRequest("POST", b.srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"default","messages":[{"role":"user","content":"refund"}]}`))
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	req.Header.Set("Idempotency-Key", "charge-77")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(raw), "idempotency_key_reused") {
		t.Fatalf("reuse: %d %s", resp.StatusCode, raw)
	}
}

// A route may serve model names of its own: the requested name goes to its
// providers, and /v1/models lists it.
func TestChatModelAliasPassesModelThrough(t *testing.T) {
	b := setup(t, options{models: []string{"gpt-4o-mini"}, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "aliased"}
	}})
	c := b.client(acmeKey)
	req := chatReq("hi")
	req.Model = "gpt-4o-mini"
	resp, err := c.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.primary.Requests()[0].Model; got != "gpt-4o-mini" || resp.Model != "gpt-4o-mini" {
		t.Fatalf("provider asked for %q, answered %q", got, resp.Model)
	}
	plain, err := c.CreateChatCompletion(context.Background(), chatReq("hi"))
	// By route name, each target's own model is sent (one provider may serve several).
	if err != nil || b.primary.Requests()[1].Model != "m1" || plain.Model != "m1" {
		t.Fatalf("route name: model %q sent, %q answered (%v)", b.primary.Requests()[1].Model, plain.Model, err)
	}
	models, err := c.ListModels(context.Background())
	if err != nil || len(models.Models) != 2 {
		t.Fatalf("models %+v %v", models, err)
	}
}

// Issue 5: tools are passed through; a tool-calling answer reaches go-openai's
// client whole, plain and streamed, and a conversation's tool turns reach the
// provider.
func TestChatToolsPassThrough(t *testing.T) {
	const calls = `[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{ToolCalls: calls}
	}})
	c := b.client(acmeKey)
	req := chatReq("weather in Paris?")
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}}
	resp, err := c.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if resp.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" ||
		msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("answer %+v", resp.Choices[0])
	}
	if sent := b.primary.Requests()[0]; !strings.Contains(string(sent.Tools), "get_weather") {
		t.Fatalf("tools did not reach the provider: %s", sent.Tools)
	}

	req.Stream = true
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: msg.ToolCalls},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_1", Content: `{"temp_c":11}`})
	stream, err := c.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var name, args string
	for _, ch := range drain(t, stream) {
		for _, choice := range ch.Choices {
			for _, tc := range choice.Delta.ToolCalls {
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
		}
	}
	if name != "get_weather" || args != `{"city":"Paris"}` {
		t.Fatalf("streamed tool call %q(%q)", name, args)
	}
	turns := b.primary.Requests()[1].Messages
	if last := turns[len(turns)-1]; last.Role != "tool" || last.ToolCallID != "call_1" || len(turns[len(turns)-2].ToolCalls) == 0 {
		t.Fatalf("tool turns did not reach the provider: %+v", turns)
	}
}

// A chat call without an Idempotency-Key gets a key of its own: "auto-" and a
// version 7 UUID, like the job's id (time-ordered ids, docs/api.md).
func TestChatWithoutKeyGetsTimeOrderedIDs(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "ok", Usage: &providers.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}
	}})
	resp, err := b.client(acmeKey).CreateChatCompletion(context.Background(), chatReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	job := b.do(t, "GET", "/v1/jobs/"+resp.Header().Get("X-Router-Job-Id"), acmeKey, "")
	key, _ := job.body["idempotency_key"].(string)
	id, _ := job.body["id"].(string)
	for what, s := range map[string]string{"key": strings.TrimPrefix(key, "auto-"), "job id": id} {
		if u, err := uuid.Parse(s); err != nil || u.Version() != 7 {
			t.Errorf("%s %q: want a version 7 UUID (err %v)", what, s, err)
		}
	}
	if !strings.HasPrefix(key, "auto-") {
		t.Errorf("key %q: want auto-<uuid>", key)
	}
}

// The first answer comes from the completion the win published in memory
// (job.WonResult), a replay from the stored copy (jsonb, decoded and encoded
// again): byte for byte the same, escaping included.
func TestChatAnswerFromTheWinEqualsItsReplay(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "a <b> & c — \u2028 \"quoted\" ✓"}
	}})
	post := func() reply {
		return b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"escape this"}]}`,
			"Idempotency-Key", "escape-1")
	}
	r1, r2 := post(), post()
	first, replay := r1.raw, r2.raw
	if r1.status != 200 || r2.status != 200 || r2.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("statuses %d %d, replayed %q", r1.status, r2.status, r2.header.Get("Idempotent-Replayed"))
	}
	if string(first) != string(replay) || r1.header.Get("Content-Type") != r2.header.Get("Content-Type") {
		t.Fatalf("first answer and replay differ:\n%s\n%s", first, replay)
	}
	var c struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(first, &c); err != nil || len(c.Choices) != 1 || c.Choices[0].Message.Content != "a <b> & c — \u2028 \"quoted\" ✓" {
		t.Fatalf("content %+v (%v) in %s", c, err, first)
	}
}

// A tool-calling answer's provider key order ("type" before "id") is not
// jsonb's: the first answer takes the stored copy as a replay does, so the two
// are byte for byte the same.
func TestChatToolCallAnswerEqualsItsReplay(t *testing.T) {
	const calls = `[{"type":"function","id":"call_1","function":{"name":"get_weather","arguments":"{}"}}]`
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{ToolCalls: calls}
	}})
	post := func() []byte {
		r := b.do(t, "POST", "/v1/chat/completions", acmeKey,
			`{"model":"default","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`,
			"Idempotency-Key", "tools-1")
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.raw)
		}
		return r.raw
	}
	first, replay := post(), post()
	if string(first) != string(replay) || !strings.Contains(string(first), `"tool_calls":`) {
		t.Fatalf("first answer and replay differ:\n%s\n%s", first, replay)
	}
}
