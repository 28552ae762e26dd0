package api_test

import (
	"context"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/providers"
)

// The provider's usage details (cached prompt tokens, reasoning tokens) reach
// the caller in the completion's usage and in the stream's usage chunk; they
// were dropped. Found by review.
func TestChatCarriesUsageDetails(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "hello", Usage: &providers.Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16,
			PromptTokensDetails:     providers.PromptTokensDetails{CachedTokens: 8},
			CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 3}}}
	}})
	ctx := context.Background()
	req := openai.ChatCompletionRequest{Model: "default", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	resp, err := b.client(acmeKey).CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	check := func(how string, u *openai.Usage) {
		t.Helper()
		if u == nil || u.TotalTokens != 16 || u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens != 8 ||
			u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens != 3 {
			t.Errorf("%s: usage %+v, want the details", how, u)
		}
	}
	check("plain", &resp.Usage)
	req.Stream, req.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
	stream, err := b.client(acmeKey).CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var usage *openai.Usage
	for _, ch := range drain(t, stream) {
		if ch.Usage != nil {
			usage = ch.Usage
		}
	}
	check("streamed", usage)
}
