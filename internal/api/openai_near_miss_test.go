package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// An OpenAI SDK whose base_url lacks /v1 asks for /chat/completions,
// /models and /models/ID: it is answered 404 in OpenAI's error shape, which
// the SDK reads, naming the endpoint it meant and saying the base_url must
// end in /v1. Before, it got a problem+json 404 that go-openai surfaced with
// no message, and that named no endpoint.
func TestOpenAISDKWithoutV1IsToldTheEndpointItMeant(t *testing.T) {
	b := setup(t, options{})
	cfg := openai.DefaultConfig(acmeKey)
	cfg.BaseURL = b.srv.URL // no /v1
	c := openai.NewClientWithConfig(cfg)
	ctx := context.Background()
	check := func(what string, err error, want string) {
		t.Helper()
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: error %v (%T); want an *openai.APIError", what, err, err)
		}
		if apiErr.HTTPStatusCode != http.StatusNotFound || apiErr.Code != "not_found" ||
			!strings.Contains(apiErr.Message, "did you mean "+want+"?") || !strings.Contains(apiErr.Message, "base_url must end in /v1") {
			t.Fatalf("%s: %d %v %q; want 404 not_found naming %s and the base_url's /v1", what, apiErr.HTTPStatusCode, apiErr.Code, apiErr.Message, want)
		}
	}
	_, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "default",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}})
	check("chat completion", err, "POST /v1/chat/completions")
	_, err = c.ListModels(ctx)
	check("list models", err, "GET /v1/models")
	_, err = c.GetModel(ctx, "default")
	check("get model", err, "GET /v1/models/default")
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d job(s) created by requests no endpoint took", n)
	}
}

// A base_url ending in a slash after /v1 (POST /v1/chat/completions/, the
// path an HTTP client joining base_url and "/chat/completions" sends) is a
// near miss too, and so is a path lacking /v1 asked with another method; a
// path that is nothing like an OpenAI endpoint keeps its problem+json 404.
func TestOpenAINearMissesAnswerInOpenAIShape(t *testing.T) {
	b := setup(t, options{})
	cases := []struct{ method, path, want string }{
		{"POST", "/v1/chat/completions/", "did you mean POST /v1/chat/completions? An OpenAI SDK's base_url must end in /v1, with no slash after it"},
		{"POST", "/chat/completions/", "did you mean POST /v1/chat/completions?"},
		{"GET", "/chat/completions", "did you mean POST /v1/chat/completions?"},
		{"GET", "/models/", "did you mean GET /v1/models?"},
		{"GET", "/models/org/model-a", "did you mean GET /v1/models/org/model-a?"},
	}
	for _, tc := range cases {
		r := b.do(t, tc.method, tc.path, acmeKey, `{}`)
		e, _ := r.body["error"].(map[string]any)
		m, _ := e["message"].(string)
		if r.status != http.StatusNotFound || e["code"] != "not_found" || !strings.Contains(m, tc.want) ||
			!strings.HasPrefix(m, tc.method+" "+tc.path+" is not an endpoint of this router") {
			t.Errorf("%s %s: %d %s; want an OpenAI-shaped 404 saying %q", tc.method, tc.path, r.status, r.raw, tc.want)
		}
	}
	for _, path := range []string{"/v1/chat/completion", "/jobs", "/v1/v1/models"} {
		r := b.do(t, "POST", path, acmeKey, `{}`)
		if r.status != http.StatusNotFound || r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("POST %s: %d %s %s; want the problem+json 404", path, r.status, r.header.Get("Content-Type"), r.raw)
		}
	}
}
