package providers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A gateway that puts finish_reason "stop" on every chunk (the case
// streamAcc.finishEarly exists for) in front of a reasoning model: its
// reasoning chunks carry "stop" before any content. Reasoning deltas set
// none of finishEarly, finishFirst or lastOnContent, so the branch added in
// da2d9d3 (the job's deadline or a cancellation ends the read "with the
// answer") returns the stream as whole — with no content — when the call is
// cancelled during the reasoning, where it was (and for content chunks
// still is) a cut.
func TestReasoningPhaseStopCancelledIsNotWhole(t *testing.T) {
	sent := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, piece := range []string{"Let me think", " about the ticket"} {
			fmt.Fprintf(w, "data: %s\n\n", `{"id":"c","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"`+piece+`"},"finish_reason":"stop"}]}`)
		}
		w.(http.Flusher).Flush()
		close(sent)
		<-r.Context().Done() // still reasoning: the answer has not begun
	}))
	t.Cleanup(srv.Close)
	read := make(chan struct{}) // the client has read both reasoning chunks
	hc := &http.Client{Transport: signalTransport{base: http.DefaultTransport, marker: []byte("about the ticket"), seen: read}}
	p, err := NewOpenAI(OpenAIConfig{Name: "gw", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "m", Stream: true,
		StreamIdleTimeout: 30 * time.Second, Timeout: time.Minute, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-sent; <-read; cancel() }() // a hedge loser's cut, or the job's deadline
	resp, err := p.CompleteStream(ctx, testRequest(), nil)
	if err == nil {
		t.Fatalf("a stream cancelled while the model was still reasoning was returned as a whole answer: content %q, finish_reason %q, reasoning %q",
			resp.Content, resp.FinishReason, resp.ReasoningContent)
	}
}

// signalTransport closes seen once the response body has passed marker
// through a Read (the client has taken the chunk that holds it).
type signalTransport struct {
	base   http.RoundTripper
	marker []byte
	seen   chan struct{}
}

func (s signalTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if err == nil {
		resp.Body = &signalBody{ReadCloser: resp.Body, t: s}
	}
	return resp, err
}

type signalBody struct {
	io.ReadCloser
	t    signalTransport
	got  []byte
	done bool
}

func (b *signalBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.done {
		b.got = append(b.got, p[:n]...)
		if bytes.Contains(b.got, b.t.marker) {
			b.done = true
			close(b.t.seen)
		}
	}
	return n, err
}
