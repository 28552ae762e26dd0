package providers

import (
	"context"
	"net/http"
	"testing"
)

// The members of usage.prompt_tokens_details and
// usage.completion_tokens_details beyond cached_tokens and reasoning_tokens
// — audio_tokens, accepted_prediction_tokens, rejected_prediction_tokens —
// were dropped; they are carried to the completion (OpenAI always sends
// them), streamed or not, and a float count still decodes (looseUsage).
// Found by review (wchat3).
func TestOpenAIUsageCarriesEveryDetail(t *testing.T) {
	want := Usage{PromptTokens: 20, CompletionTokens: 30, TotalTokens: 50,
		PromptTokensDetails: PromptTokensDetails{CachedTokens: 2, AudioTokens: 3},
		CompletionTokensDetails: CompletionTokensDetails{ReasoningTokens: 1, AudioTokens: 4,
			AcceptedPredictionTokens: 5, RejectedPredictionTokens: 6}}
	for _, usage := range []string{
		`{"prompt_tokens":20,"completion_tokens":30,"total_tokens":50,"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":3},` +
			`"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":4,"accepted_prediction_tokens":5,"rejected_prediction_tokens":6}}`,
		`{"prompt_tokens":20.0,"completion_tokens":30,"total_tokens":50,"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":3},` +
			`"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":4.0,"accepted_prediction_tokens":5,"rejected_prediction_tokens":6}}`,
	} {
		plain := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusOK, nil, `{"id":"x","object":"chat.completion","created":1700000000,"model":"gpt-test",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":`+usage+`}`)
		})
		resp, err := newTestAdapter(t, plain.URL, nil).Complete(context.Background(), testRequest())
		if err != nil || resp.Usage != want {
			t.Errorf("unstreamed, usage %s: %+v (%v), want %+v", usage, resp, err, want)
		}
		streamed := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w,
				`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`,
				`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":`+usage+`}`,
				"[DONE]")
		})
		resp, err = newTestAdapter(t, streamed.URL, func(c *OpenAIConfig) { c.Stream = true }).CompleteStream(context.Background(), testRequest(), nil)
		if err != nil || resp.Usage != want {
			t.Errorf("streamed, usage %s: %+v (%v), want %+v", usage, resp, err, want)
		}
	}
}
