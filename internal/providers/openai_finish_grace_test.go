package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// keepAliveAfter serves a stream of events, then SSE keep-alive comments
// (every 20 ms) until the client goes: no usage chunk after them, no [DONE].
func keepAliveAfter(t *testing.T, events ...string) string {
	t.Helper()
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w, events...)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				fmt.Fprint(w, ": keep-alive\n\n")
				w.(http.Flusher).Flush()
			}
		}
	})
	return srv.URL
}

// A stream whose answer is whole at its finish_reason, followed only by
// keep-alive comments (no usage chunk, no [DONE]) until the attempt's
// timeout, is the answer, as the same stream falling silent is: the comments
// kept renewing the idle deadline, and the timeout threw the answer away
// (stream_timeout, "the answer will not arrive whole"). So is one whose
// usage chunk came, with its usage; and, without an idle deadline, one whose
// timeout passes after its finish_reason. Found by review.
func TestOpenAIStreamFinishThenKeepAlivesIsWhole(t *testing.T) {
	for name, c := range map[string]struct {
		events []string
		idle   time.Duration
		usage  bool
	}{
		"finish on an empty delta":               {[]string{chunk("the whole", ""), chunk(" answer", ""), chunk("", "stop")}, 200 * time.Millisecond, false},
		"finish, then the usage chunk":           {[]string{chunk("the whole", ""), chunk(" answer", ""), chunk("", "stop"), usageChunk}, 200 * time.Millisecond, true},
		"finish on the last token, then usage":   {[]string{chunk("the whole", ""), chunk(" answer", "stop"), usageChunk}, 200 * time.Millisecond, true},
		"no idle deadline: timeout after finish": {[]string{chunk("the whole", ""), chunk(" answer", ""), chunk("", "stop")}, 0, false},
	} {
		p := newTestAdapter(t, keepAliveAfter(t, c.events...), func(cfg *OpenAIConfig) {
			cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, 2*time.Second, c.idle
		})
		resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
		if err != nil {
			t.Errorf("%s: the answer whole at its finish_reason was thrown away: %v", name, err)
			continue
		}
		if resp.Content != "the whole answer" || resp.FinishReason != "stop" {
			t.Errorf("%s: got %q (%s), want the whole answer (stop)", name, resp.Content, resp.FinishReason)
		}
		if c.usage && (resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 5) {
			t.Errorf("%s: usage %+v, want the usage chunk's 11 in, 5 out", name, resp.Usage)
		}
	}
}

// A stream whose finish_reason is followed by more of the answer (a
// gateway's "stop" on every chunk) is whole only at [DONE]: keep-alives
// after it do not make it whole, as silence does not; the attempt's timeout
// fails it (stream_timeout) with the part that came.
func TestOpenAIStreamMoreAfterFinishThenKeepAlivesFails(t *testing.T) {
	url := keepAliveAfter(t, chunk("Step 1: unplug the router.", ""), chunk(" Step 2:", "stop"), chunk(" wa", "stop"))
	p := newTestAdapter(t, url, func(cfg *OpenAIConfig) {
		cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, time.Second, 200*time.Millisecond
	})
	resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindStreamTimeout {
		t.Fatalf("got %v, %v; want a stream_timeout: the answer was not whole", resp, err)
	}
	if e.Partial != "Step 1: unplug the router. Step 2: wa" {
		t.Errorf("partial %q, want what came", e.Partial)
	}
}

// A finish_reason on the last token (vLLM's, TGI's shape) followed only by
// keep-alives cannot be told from a gateway's "stop" on every chunk while its
// upstream is slow: the answer is not taken as whole there (that could return
// a cut answer as a success); the attempt's timeout fails it, with the part
// that came, and the job fails over. Silence past the idle deadline, the
// stream's end, a usage chunk or [DONE] after it still make it whole.
func TestOpenAIStreamFinishOnTheLastTokenThenKeepAlivesFails(t *testing.T) {
	url := keepAliveAfter(t, chunk("the whole", ""), chunk(" answer", "stop"))
	p := newTestAdapter(t, url, func(cfg *OpenAIConfig) {
		cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, time.Second, 200*time.Millisecond
	})
	resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindStreamTimeout {
		t.Fatalf("got %v, %v; want a stream_timeout: a finish_reason on a content chunk does not end the answer while keep-alives come", resp, err)
	}
	if e.Partial != "the whole answer" {
		t.Errorf("partial %q, want what came", e.Partial)
	}
}
