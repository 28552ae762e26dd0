package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// The router's base URL for OpenAI SDKs is http://HOST/v1 (docs/chat.md), and
// the same client object also reaches the OpenAI endpoints the router does not
// serve: client.Responses.New (POST /v1/responses, the API OpenAI's current
// examples use), client.Chat.Completions.Get (GET /v1/chat/completions/{id},
// stored completions), client.Completions.New (POST /v1/completions). Those
// were answered as application/problem+json ({"type","title","detail",...}),
// which openai-go does not read: it takes the body's "error" member, so the
// caller's *openai.Error has no message, code or type — only "OpenAI API
// error: 404 Not Found", with nothing saying that the router serves only
// chat completions. They are answered in OpenAI's shape now, saying what the
// router serves. Found by review (rchat7).
func TestSDKEndpointsTheRouterLacksAnswerInOpenAIShape(t *testing.T) {
	b := setup(t, options{})
	c := b.sdk(acmeKey)
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		var apiErr *oai.Error
		if !errors.As(err, &apiErr) {
			t.Errorf("%s: %v, want an *openai.Error", what, err)
			return
		}
		if apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "not_found" || !strings.Contains(apiErr.Message, "is not served by this router") {
			t.Errorf("%s: status %d, code %q, message %q: the SDK's error says nothing (body %s)", what, apiErr.StatusCode, apiErr.Code, apiErr.Message, apiErr.RawJSON())
		}
	}
	_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "default", Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("hi")}})
	check("Responses.New", err)
	_, err = c.Chat.Completions.Get(ctx, "chatcmpl-0123")
	check("Chat.Completions.Get", err)
	_, err = c.Completions.New(ctx, oai.CompletionNewParams{Model: "default", Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("hi")}})
	check("Completions.New", err)
}

// The 404 for another of OpenAI's paths says what the router serves; the
// router's own paths, and paths like none of OpenAI's, keep the problem
// shape.
func TestOpenAIPathsNotServedSayWhatIs(t *testing.T) {
	b := setup(t, options{})
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/responses"}, {"GET", "/v1/responses/resp_1"}, {"POST", "/v1/completions"},
		{"POST", "/v1/embeddings"}, {"GET", "/v1/chat/completions/chatcmpl-1/messages"}, {"DELETE", "/v1/chat/completions/chatcmpl-1"},
		{"POST", "/v1/audio/transcriptions"}, {"GET", "/v1/files"},
	} {
		r := b.do(t, c.method, c.path, acmeKey, `{}`)
		e, _ := r.body["error"].(map[string]any)
		m, _ := e["message"].(string)
		if r.status != http.StatusNotFound || r.header.Get("Content-Type") != "application/json" || e["code"] != "not_found" ||
			!strings.HasPrefix(m, c.method+" "+c.path+" is not served by this router") ||
			!strings.Contains(m, "POST /v1/chat/completions, GET /v1/models and GET /v1/models/{model} (besides") {
			t.Errorf("%s %s: %d %s %s; want an OpenAI-shaped 404 saying what the router serves", c.method, c.path, r.status, r.header.Get("Content-Type"), r.raw)
		}
	}
	for _, path := range []string{"/v1/jobz", "/v1/jobs/x/y/z", "/v1/chat/completion", "/responses"} {
		r := b.do(t, "POST", path, acmeKey, `{}`)
		if r.status != http.StatusNotFound || r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("POST %s: %d %s %s; want the problem+json 404", path, r.status, r.header.Get("Content-Type"), r.raw)
		}
	}
}
