package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An answer that names no model — a stream whose chunks leave "model" out,
// or a body without it, as some OpenAI-compatible servers send — is the
// model the request asked for: the chat caller got `"model": ""`. Found by
// review.
func TestAnswerWithoutModelIsTheModelAskedFor(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			if !stream {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, strings.Replace(completionBody, `"model":"gpt-test-0613",`, "", 1))
				return
			}
			startStream(w)
			sse(w, strings.Replace(chunk("ok", "stop"), `"model":"gpt-test-0613",`, "", 1), "[DONE]")
		})
		resp, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		if err != nil {
			t.Fatalf("stream %t: %v", stream, err)
		}
		if resp.Model != "gpt-test" {
			t.Errorf("stream %t: answer without a model reported as model %q, want the model asked for, gpt-test", stream, resp.Model)
		}
	}
}
