package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/api"
)

// A panic while serving a plain (unstreamed) chat completion was answered
// with application/problem+json: go-openai read it as a RequestError with no
// message, and its detail advised resending "with the same Idempotency-Key"
// a call that sent none. docs/chat.md promises 500 internal in OpenAI's
// shape, which the SDKs decode as an API error; its message words the advice
// for callers with a key and without one. Found by review.
func TestPanicInPlainChatIsOpenAIInternalError(t *testing.T) {
	b := setup(t, options{exec: func(e api.Executor) api.Executor { return panickingExecutor{e} }})
	for _, key := range []string{"", "panic-plain-1"} {
		req := openai.ChatCompletionRequest{Model: "default", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
		cfg := openai.DefaultConfig(acmeKey)
		cfg.BaseURL = b.srv.URL + "/v1"
		if key != "" {
			cfg.HTTPClient = &http.Client{Transport: withHeader{"Idempotency-Key", key}}
		}
		_, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), req)
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("key %q: %T %v, want *openai.APIError", key, err, err)
		}
		if apiErr.HTTPStatusCode != http.StatusInternalServerError || apiErr.Code != "internal" || apiErr.Type != "server_error" ||
			!strings.Contains(apiErr.Message, "the router failed unexpectedly") || !strings.Contains(apiErr.Message, "without one, a resend is a new request") {
			t.Fatalf("key %q: %d %v %q %q", key, apiErr.HTTPStatusCode, apiErr.Code, apiErr.Type, apiErr.Message)
		}
	}
	// The jobs API keeps its problem+json answer.
	r := b.create(t, acmeKey, "panic-job-1", triageBody("panic"))
	if r.status != http.StatusInternalServerError || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("jobs: %d %s %s", r.status, r.header.Get("Content-Type"), r.raw)
	}
}

// withHeader is a transport that adds one header to every request.
type withHeader struct{ name, value string }

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}
