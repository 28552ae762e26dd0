package providers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// keepAliveIdle is the idle deadline of the keep-alive tests: the fakes send
// a keep-alive every keepAliveEvery for two such deadlines before their
// first chunk, so that without keep-alives counting the deadline fires. The
// times pace a provider, they do not synchronise the test: it can fail only
// if the machine holds the fake or the client back for a whole second, fifty
// keep-alive periods.
const (
	keepAliveIdle  = time.Second
	keepAliveEvery = keepAliveIdle / 50
)

// keepAlive writes keep() every keepAliveEvery, flushed, until two idle
// deadlines have passed, or the client went away.
func keepAlive(w http.ResponseWriter, r *http.Request, keep func()) {
	tick := time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	end := time.Now().Add(2 * keepAliveIdle)
	for time.Now().Before(end) {
		keep()
		w.(http.Flusher).Flush()
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		}
	}
}

// A provider that keeps the connection open with SSE comments while its
// model thinks (OpenRouter's ": OPENROUTER PROCESSING", or another router's
// ": waiting…" keep-alives when routers are chained) is alive: only chunks
// reset the idle deadline, so a first token later than stream_idle_timeout
// failed the attempt as stream_stalled. The same for Anthropic's ping events,
// which the SDK consumes before the adapter sees an event. Any body bytes
// reset it now. Found by review.
func TestStreamKeepAlivesResetTheIdleDeadline(t *testing.T) {
	openaiSrv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		keepAlive(w, r, func() { io.WriteString(w, ": OPENROUTER PROCESSING\n\n") })
		sse(w, chunk("hello", ""), chunk("", "stop"), "[DONE]")
	})
	anthropicSrv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		anthropicEvent(w, "message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`)
		keepAlive(w, r, func() { anthropicEvent(w, "ping", `{"type":"ping"}`) })
		anthropicEvent(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		anthropicEvent(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}`)
		anthropicEvent(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
		anthropicEvent(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`)
		anthropicEvent(w, "message_stop", `{"type":"message_stop"}`)
		w.(http.Flusher).Flush()
	})
	for name, p := range map[string]Streamer{
		"openai": newTestAdapter(t, openaiSrv.URL, func(c *OpenAIConfig) {
			c.StreamIdleTimeout, c.Timeout = keepAliveIdle, time.Minute
		}),
		"anthropic": newAnthropicAdapter(t, anthropicSrv.URL, func(c *AnthropicConfig) {
			c.StreamIdleTimeout, c.Timeout = keepAliveIdle, time.Minute
		}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatalf("a stream kept alive every %s failed with stream_idle_timeout %s: %v", keepAliveEvery, keepAliveIdle, err)
			}
			if resp.Content != "hello" {
				t.Fatalf("content %q, want hello", resp.Content)
			}
		})
	}
}

// A stream that sends nothing at all after its keep-alives still stalls: the
// keep-alives count as life, not as an exemption from the deadline.
func TestStreamSilentAfterKeepAlivesStalls(t *testing.T) {
	release := make(chan struct{})
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		io.WriteString(w, strings.Repeat(": keepalive\n\n", 3))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.StreamIdleTimeout, c.Timeout = 50*time.Millisecond, time.Minute })
	_, err := p.CompleteStream(context.Background(), testRequest(), nil)
	if e := assertKind(t, err, KindStreamStalled, FaultProvider, ActionFailover, false); !e.Received {
		t.Fatalf("a stall after keep-alives is not marked received: %v", e)
	}
}

// anthropicEvent writes one SSE event as Anthropic does (event: and data:
// lines).
func anthropicEvent(w io.Writer, typ, data string) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
}
