package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A 404 without an API error object is what a server answers for a path it
// does not have: Ollama's or vLLM's at a base_url without its /v1. It said
// "check the target's model"; it stays model_not_found (failed over), and
// the message names base_url (and its usual /v1) and the model sent. Found
// by review.
func TestRouteLevel404NamesBaseURL(t *testing.T) {
	for _, tc := range []struct{ name, ct, body string }{
		{"ollama without /v1", "text/plain", "404 page not found"},
		{"vllm without /v1", "application/json", `{"detail":"Not Found"}`},
		{"web server page", "text/html", "<html><head><title>404 Not Found</title></head></html>"},
		{"empty", "", ""},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", tc.ct)
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, tc.body)
				})
				p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if !strings.Contains(e.Message, "base_url") || !strings.Contains(e.Message, "/v1") || !strings.Contains(e.Message, `"gpt-test"`) {
					t.Errorf("kind %s, message %q: a 404 without an API error object is the target's base_url", e.Kind, e.Message)
				}
				if e.Kind != KindModelNotFound || e.Action != ActionFailover {
					t.Errorf("got %s/%s, want model_not_found/failover", e.Kind, e.Action)
				}
			})
		}
	}
}

// A 404 with the API's error (OpenAI's model_not_found) keeps the message
// about the account's model, which hides the provider's words.
func TestAPIError404KeepsModelMessage(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, 404, nil, apiErrorBody("The model `gpt-x` does not exist or you do not have access to it.", "invalid_request_error", nil, "model_not_found"))
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind != KindModelNotFound || e.Message != operatorsMessages[KindModelNotFound] {
		t.Errorf("got %s %q, want model_not_found with the operators' message", e.Kind, e.Message)
	}
}
