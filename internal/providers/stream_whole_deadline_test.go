package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// cancelAfterFinish is a response body that cancels the call's context on the
// first read after the one that returned the stream's finish_reason chunk:
// go-openai reads the body again only once it has handed over every line it
// holds, so by then the adapter has taken the finish_reason in.
type cancelAfterFinish struct {
	io.ReadCloser
	cancel context.CancelFunc
	mu     sync.Mutex
	seen   bool
}

func (b *cancelAfterFinish) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.seen {
		b.cancel() // the job's deadline, a moment after the whole answer came
	}
	b.mu.Unlock()
	n, err := b.ReadCloser.Read(p)
	if bytes.Contains(p[:n], []byte(`"finish_reason":"stop"`)) {
		b.mu.Lock()
		b.seen = true
		b.mu.Unlock()
	}
	return n, err
}

type cancelAfterFinishRT struct {
	base   http.RoundTripper
	cancel context.CancelFunc
}

func (rt cancelAfterFinishRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(r)
	if err == nil {
		resp.Body = &cancelAfterFinish{ReadCloser: resp.Body, cancel: rt.cancel}
	}
	return resp, err
}

// docs/providers.md: "An OpenAI-compatible stream's answer is complete at its
// finish_reason"; after it the adapter only waits (up to
// stream_idle_timeout) for the usage chunk or [DONE], and once the usage
// chunk came "whatever ends [the read] — ... the job's deadline or a
// cancellation — returns the answer as it stands". So it does before the
// usage chunk came, when the finish_reason came on an empty delta (a server
// that ignores include_usage and keeps the connection open — the gateways
// the docs name): the job's deadline (or any cancellation) in that wait threw
// the whole, billed answer away, the race recorded "cut by the job's
// deadline after the provider began answering" and the caller got 504
// deadline_exceeded although the complete answer arrived before the deadline.
func TestWholeAnswerAwaitingUsageSurvivesTheDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		startStream(w)
		sse(w, chunk("The answer is 4.", ""))
		sse(w, chunk("", "stop")) // the finish_reason on an empty delta, as OpenAI sends it
		// No usage chunk, no [DONE]: the connection stays open.
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) {
		c.StreamIdleTimeout = time.Minute // the grace for the usage chunk
		c.Timeout = 10 * time.Minute
		c.HTTPClient = &http.Client{Transport: cancelAfterFinishRT{base: http.DefaultTransport, cancel: cancel}}
	})
	resp, err := p.CompleteStream(ctx, testRequest(), nil)
	if err != nil {
		t.Fatalf("a whole answer (finish_reason stop came, only the usage chunk was awaited) was thrown away when the job's context ended: %v", err)
	}
	if resp.Content != "The answer is 4." || resp.FinishReason != "stop" {
		t.Fatalf("content %q finish %q", resp.Content, resp.FinishReason)
	}
}
