package providers

import (
	"context"
	"net/http"
	"testing"
)

// A gateway's HTTP 200 whose body is Anthropic's error envelope
// ({"type":"error", …}) but whose inner error names no type is still an
// error object: the same envelope sent as an `error` event in a stream is
// classified as the provider's refusal (AnsweredWithError, no usage), and
// the body, streamed or not, is classified as that event is — not read as a
// message without stop_reason or a stream of no events (a broken answer,
// its prompt estimated as billed and counted against the breaker).
func TestAnthropicTypelessErrorObject(t *testing.T) {
	body := `{"type":"error","error":{"message":"Overloaded"}}`
	// The same envelope as an error event: the reference.
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("event: error\ndata: " + body + "\n\n"))
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	_, err := p.Complete(context.Background(), testRequest())
	ev, _ := AsError(err)
	if ev == nil || !ev.AnsweredWithError {
		t.Fatalf("as an error event: got %v, want a refusal answered with error", err)
	}
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		})
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		pe, _ := AsError(err)
		if pe == nil || !pe.AnsweredWithError || !pe.Received || pe.Usage != nil {
			t.Errorf("stream %v: got %v, want the error object's refusal: received, answered with error, no usage", stream, err)
			continue
		}
		if pe.Kind != ev.Kind || pe.Action != ev.Action {
			t.Errorf("stream %v: kind %v action %v, want the error event's kind %v action %v", stream, pe.Kind, pe.Action, ev.Kind, ev.Action)
		}
		if want := "HTTP 200 answered with an error object: Overloaded"; pe.Message != want {
			t.Errorf("stream %v: message %q, want %q", stream, pe.Message, want)
		}
	}
}

// Without the outer "type":"error", an inner error without a type is not
// taken for Anthropic's error object: an arbitrary {"error":…} in a 200 is
// judged as before (a broken answer), not as the provider's refusal.
func TestAnthropicTypelessBareErrorNotObject(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"error":{"message":"Overloaded"}}`))
		})
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		pe, _ := AsError(err)
		if pe == nil || pe.AnsweredWithError {
			t.Errorf("stream %v: got %v, want a broken answer, not a refusal", stream, err)
		}
	}
}
