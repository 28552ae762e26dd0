package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// A model id the target's provider does not serve is the router's
// configuration (the target's model, or a route's `models`), whatever status
// it comes with: OpenRouter and LiteLLM answer it with 400, not OpenAI's 404.
// As a bad request it stopped the job with no failover and the breaker
// counted it as a success, so a retired model id took the route down.
func TestModelIDRefusedWith400IsModelNotFound(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"openrouter", `{"error":{"message":"openai/gpt-4o-mini-x is not a valid model ID","code":400},"user_id":"user_2x7D"}`},
		{"litellm", apiErrorBody("/chat/completions: Invalid model name passed in model=gpt-5. Call `/v1/models` to view available models for your key.", "invalid_request_error", "model", "400")},
		{"mistral", `{"object":"error","message":"Invalid model: mistral-x","type":"invalid_model","param":null,"code":"1500"}`},
		{"deepseek", apiErrorBody("Model Not Exist", "invalid_request_error", nil, "invalid_request_error")},
		{"openai code", apiErrorBody("The model `gpt-x` does not exist or you do not have access to it.", "invalid_request_error", nil, "model_not_found")},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 400, nil, tc.body) })
				p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != KindModelNotFound || e.Fault != FaultRouter || e.Action != ActionFailover || e.StatusCode != 400 {
					t.Fatalf("got %s/%s/%s (HTTP %d), want model_not_found/router/failover as a 404 is: %s",
						e.Kind, e.Fault, e.Action, e.StatusCode, e.Message)
				}
				if e.Message != operatorsMessages[KindModelNotFound] || e.ProviderMessage == "" {
					t.Fatalf("message %q (provider's %q): the router's model_not_found message, the provider's kept for the log", e.Message, e.ProviderMessage)
				}
			})
		}
	}
}

// OpenAI's model_not_found (type invalid_request_error) arriving as an error
// event in a 200 stream was read by its type first, a bad request.
func TestModelNotFoundErrorEventInStream(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w, apiErrorBody("The model `gpt-x` does not exist or you do not have access to it.", "invalid_request_error", nil, "model_not_found"))
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true })
	_, err := p.Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind != KindModelNotFound || e.Action != ActionFailover {
		t.Fatalf("got %s/%s/%s, want model_not_found: %s", e.Kind, e.Fault, e.Action, e.Message)
	}
}

// A plain bad request that merely mentions a model stays the caller's.
func TestModelWordsInABadRequestStayBadRequest(t *testing.T) {
	for _, msg := range []string{
		"Invalid value for 'temperature': the model accepts 0 to 2.",
		"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
	} {
		if e := ClassifyStatus("p", 400, "", msg); e.Kind != KindBadRequest {
			t.Errorf("%q: kind %s, want bad_request", msg, e.Kind)
		}
	}
}
