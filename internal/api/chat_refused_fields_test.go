package api_test

import (
	"context"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/providers"
)

// Legacy function calling, stream_options without stream, and outputs other
// than text were dropped and the call answered 200 (a caller's functions
// never offered, its function_call never honoured). Each is a 400 naming the
// field now, before anything is stored. Found by review.
func TestChatRefusesFieldsItCannotHonour(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "hello"} }})
	ctx := context.Background()
	hi := []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}
	for param, req := range map[string]openai.ChatCompletionRequest{
		"functions": {Model: "default", Messages: hi,
			Functions: []openai.FunctionDefinition{{Name: "f", Parameters: map[string]any{"type": "object"}}}},
		"function_call":  {Model: "default", Messages: hi, FunctionCall: "auto"},
		"stream_options": {Model: "default", Messages: hi, StreamOptions: &openai.StreamOptions{IncludeUsage: true}},
	} {
		_, err := b.keyedClient("refused-1").CreateChatCompletion(ctx, req)
		if e := apiError(err); e == nil || e.HTTPStatusCode != http.StatusBadRequest || e.Param == nil || *e.Param != param {
			t.Errorf("%s: %v, want 400 naming it", param, err)
		}
	}
	for param, field := range map[string]string{
		"modalities":         `"modalities":["text","audio"]`,
		"audio":              `"audio":{"voice":"alloy","format":"wav"}`,
		"web_search_options": `"web_search_options":{}`,
	} {
		r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}],`+field+`}`,
			"Idempotency-Key", "refused-1")
		if _, _, p, _ := openAIErr(r); r.status != http.StatusBadRequest || p != param {
			t.Errorf("%s: %d %s, want 400 naming it", param, r.status, r.raw)
		}
	}
	for _, table := range []string{"jobs", "idempotency_keys", "attempts"} {
		if n := b.count(t, `SELECT count(*) FROM `+table); n != 0 {
			t.Fatalf("%d rows left in %s by refused requests", n, table)
		}
	}
	// The key is free for the corrected request.
	if _, err := b.keyedClient("refused-1").CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "default", Messages: hi}); err != nil {
		t.Fatal(err)
	}
}

// Text parts reach the provider joined with newlines (they were joined with
// nothing: "Translate to French:" and "Good morning" became one word), and
// an assistant turn's refusal reaches it (it was dropped). Found by review.
func TestChatSendsTextPartsAsLinesAndRefusals(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "Bonjour"} }})
	_, err := b.client(acmeKey).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "default",
		Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "help me hack"},
			{Role: "assistant", Refusal: "I can't help with that."},
			{Role: "user", MultiContent: []openai.ChatMessagePart{
				{Type: openai.ChatMessagePartTypeText, Text: "Translate to French:"},
				{Type: openai.ChatMessagePartTypeText, Text: "Good morning"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := b.primary.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 3 {
		t.Fatalf("the provider received %+v", reqs)
	}
	if got := reqs[0].Messages[2].Content; got != "Translate to French:\nGood morning" {
		t.Errorf("text parts sent as %q", got)
	}
	if got := reqs[0].Messages[1].Refusal; got != "I can't help with that." {
		t.Errorf("the assistant's refusal sent as %q", got)
	}
}
