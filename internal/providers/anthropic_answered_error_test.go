package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A gateway in front of the Messages API that answers HTTP 200 with
// Anthropic's error object in place of the message (as the OpenAI-compatible
// adapter handles: "HTTP 200 answered with an error object") was taken as a
// message without stop_reason, or a stream cut after 0 events: received,
// counted against the breaker, never retried, and — no usage — its prompt
// estimated as billed, though the provider refused the request. It is
// classified by what the error object says, AnsweredWithError (the race
// estimates nothing for it). Found by review.
func TestAnthropicAnsweredErrorObject(t *testing.T) {
	for _, ct := range []string{"application/json", ""} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Write([]byte(` {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`))
		})
		for _, stream := range []bool{false, true} {
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			pe, _ := AsError(err)
			if pe == nil || pe.Kind != KindRateLimited || !pe.AnsweredWithError || !pe.Received || pe.Usage != nil {
				t.Errorf("Content-Type %q, stream %v: got %v, want rate_limited from the error object, answered with error, no usage", ct, stream, err)
				continue
			}
			if !strings.Contains(pe.Message, "HTTP 200 answered with an error object") || !strings.Contains(pe.Message+pe.ProviderMessage, "per-minute rate limit") {
				t.Errorf("Content-Type %q, stream %v: message %q", ct, stream, pe.Message)
			}
		}
	}
}

// An error object that says the request is wrong is the caller's
// bad_request, as the same object with HTTP 400 is; one Anthropic's own
// overload is unavailable.
func TestAnthropicAnsweredErrorObjectKinds(t *testing.T) {
	for body, want := range map[string]Kind{
		`{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: Field required"}}`: KindBadRequest,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`:                              KindUnavailable,
		`{"error":{"type":"api_error","message":"Internal server error"}}`:                                         KindServerError,
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		})
		for _, stream := range []bool{false, true} {
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			if pe, _ := AsError(err); pe == nil || pe.Kind != want || !pe.AnsweredWithError {
				t.Errorf("%s (stream %v): got %v, want %s answered with error", body, stream, err, want)
			}
		}
	}
}

// A streamed call answered with a JSON body that is not an error object is
// not the stream: still a stream cut after 0 events, as before.
func TestAnthropicStreamAnsweredOtherJSON(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","type":"something"}`))
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	_, err := p.Complete(context.Background(), testRequest())
	if pe, _ := AsError(err); pe == nil || pe.Kind != KindStreamCut || pe.AnsweredWithError {
		t.Errorf("got %v, want a stream cut", err)
	}
}
