package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A 200 whose Content-Type is not the API's — a proxy's HTML page, a web
// server at a wrong base_url — is not the provider's answer: malformed_response
// (non-streamed) or stream_malformed (streamed), saying so and naming
// base_url, Received (bytes came) and AnsweredWithError (nothing billed that
// the router knows of: no usage estimated). Not unknown with the SDK's
// wording, nor a stream "cut" billed an estimate. Found by review.
func TestHTML200IsNotTheAPIsAnswer(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html>proxy page</html>"))
	})
	for _, c := range []struct {
		name   string
		stream bool
		call   func() (*Response, error)
	}{
		{"openai", false, func() (*Response, error) {
			return newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		}},
		{"openai stream", true, func() (*Response, error) {
			return newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		}},
		{"anthropic", false, func() (*Response, error) {
			return newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		}},
		{"anthropic stream", true, func() (*Response, error) {
			return newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).CompleteStream(context.Background(), testRequest(), nil)
		}},
	} {
		_, err := c.call()
		e := mustError(t, err)
		want := KindMalformedResponse
		if c.stream {
			want = KindStreamMalformed
		}
		if e.Kind != want || !e.Received || !e.AnsweredWithError || e.OutcomeUnknown || e.Provider == "" ||
			!strings.Contains(e.Message, "HTTP 200 with Content-Type text/html; charset=utf-8: not the API's answer (check base_url)") {
			t.Errorf("%s: %s received %v answered with error %v unknown %v provider %q: %q, want %s",
				c.name, e.Kind, e.Received, e.AnsweredWithError, e.OutcomeUnknown, e.Provider, e.Message, want)
		}
	}
}

// The API's own types pass, and so do the loose labels OpenAI-compatible
// servers and gateways use (none, text/plain, a stream as JSON): only a page
// is refused.
func TestAPIAndLooseContentTypesPass(t *testing.T) {
	for _, ct := range []string{"application/json; charset=utf-8", "text/plain; charset=utf-8", ""} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = []string{ct}
			_, _ = w.Write([]byte(completionBody))
		})
		if _, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest()); err != nil {
			t.Errorf("Content-Type %q: %v", ct, err)
		}
	}
	for _, ct := range []string{"text/event-stream; charset=utf-8", "application/json", ""} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = []string{ct}
			sse(w, chunk("Hello", "stop"), "[DONE]")
		})
		if _, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil); err != nil {
			t.Errorf("stream, Content-Type %q: %v", ct, err)
		}
	}
}

// Every provider answer's Content-Type is looked at: the API's own types are
// let through without parsing them.
func TestNotTheAnswerAllocatesNothingForTheAPIsTypes(t *testing.T) {
	for _, ct := range []string{"application/json", "text/event-stream; charset=utf-8", ""} {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}}
		if a := testing.AllocsPerRun(100, func() { _ = notTheAnswer("p", answerJSON, resp) }); a != 0 {
			t.Errorf("Content-Type %q: %v allocations per answer", ct, a)
		}
	}
}
