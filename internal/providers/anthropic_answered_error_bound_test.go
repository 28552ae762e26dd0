package providers

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// endlessObject is a body that begins like a JSON object and never ends,
// counting what was read from it; a read past stop fails (so that a reader
// without a bound ends the test instead of filling the memory).
type endlessObject struct {
	read, stop int64
	started    bool
}

func (b *endlessObject) Read(p []byte) (int, error) {
	if b.read >= b.stop {
		return 0, io.ErrUnexpectedEOF
	}
	n := 0
	if !b.started && len(p) > 0 {
		p[0], n, b.started = '{', 1, true
	}
	for ; n < len(p); n++ {
		p[n] = ' '
	}
	b.read += int64(n)
	return n, nil
}

func (b *endlessObject) Close() error { return nil }

// The streamed call's look for Anthropic's error object in a 2xx answer not
// labelled text/event-stream that starts with "{" reads no more than the
// adapter's max_response_bytes (and one byte more), whatever body it is
// handed — not the whole body, which need not end — and the call fails as
// any answer past that bound does: response_too_large. Found by review.
func TestAnthropicStreamErrorObjectReadIsBounded(t *testing.T) {
	const limit = 64 << 10
	p := newAnthropicAdapter(t, "http://127.0.0.1:1", func(c *AnthropicConfig) { c.Stream = true; c.MaxResponseBytes = limit })
	body := &endlessObject{stop: 64 * limit}
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/v1/messages", nil)
	resp, err := p.streamErrorObject(req, func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}, nil
	})
	if err != nil {
		t.Fatalf("got %v, want the answer handed on to the SDK (no error object in it)", err)
	}
	if body.read > limit+4096 {
		t.Fatalf("read %d bytes of the answer looking for an error object, want at most max_response_bytes (%d) and a buffer", body.read, limit)
	}
	got, rerr := io.ReadAll(resp.Body)
	if _, ok := tooLarge("claude", rerr); !ok || int64(len(got)) > limit {
		t.Fatalf("the SDK read %d bytes then %v, want at most %d bytes then a response too large error", len(got), rerr, limit)
	}
}

// End to end: a 200 answer to a streamed call, labelled application/json,
// that begins with "{" and never ends is response_too_large once
// max_response_bytes have come, and no more is taken from the provider.
func TestAnthropicStreamEndlessObjectIsTooLarge(t *testing.T) {
	const limit = 64 << 10
	var sent atomic.Int64
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		body := &endlessObject{stop: 1 << 40}
		buf := make([]byte, 4096)
		for r.Context().Err() == nil {
			n, _ := body.Read(buf)
			if _, err := w.Write(buf[:n]); err != nil {
				return
			}
			sent.Add(int64(n))
			if sent.Load() > 1<<30 {
				return // a bound on the test, not the router's
			}
		}
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true; c.MaxResponseBytes = limit })
	_, err := p.Complete(context.Background(), testRequest())
	if pe, _ := AsError(err); pe == nil || pe.Kind != KindResponseTooLarge || pe.AnsweredWithError {
		t.Fatalf("got %v, want response_too_large", err)
	}
	if sent.Load() >= 1<<30 {
		t.Fatalf("the provider sent %d bytes: the router read the endless answer without a bound", sent.Load())
	}
}
