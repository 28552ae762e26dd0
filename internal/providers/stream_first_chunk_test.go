package providers

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
)

// firstByteCount is a context whose first-byte hooks (OnFirstByte) count
// their runs.
func firstByteCount() (context.Context, *atomic.Int64) {
	var n atomic.Int64
	return OnFirstByte(context.Background(), func() { n.Add(1) }), &n
}

// streamedAdapters are the two streaming adapters, each on a server answering
// with h.
var streamedAdapters = []struct {
	name string
	new  func(t *testing.T, url string) Provider
	// keepAlive is what the provider sends while its model works.
	keepAlive string
}{
	{"openai", func(t *testing.T, url string) Provider {
		return newTestAdapter(t, url, func(c *OpenAIConfig) { c.Stream = true })
	}, ": keep-alive\n\n"},
	{"anthropic", func(t *testing.T, url string) Provider {
		return newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.Stream = true })
	}, "event: ping\ndata: {\"type\": \"ping\"}\n\n"},
}

// A stream's headers, SSE comments and pings say that the connection lives,
// not that an answer has begun: many servers send them at once and then
// nothing while the model works (OpenRouter's ": OPENROUTER PROCESSING", vLLM
// behind uvicorn, another router). The first-byte hooks — what holds a
// hedge and what adaptive hedging learns the target's time to first byte
// from — run at the first chunk. (Found by review: a target that sends its
// headers at once was never hedged.)
func TestStreamBeginsAnsweringAtItsFirstChunk(t *testing.T) {
	for _, a := range streamedAdapters {
		t.Run(a.name+"/headers and keep-alives only", func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				fmt.Fprint(w, a.keepAlive, a.keepAlive)
				w.(http.Flusher).Flush()
				// The body ends here: a stream cut before its first chunk.
			})
			ctx, hooks := firstByteCount()
			_, err := a.new(t, srv.URL).Complete(ctx, testRequest())
			if e := mustError(t, err); !e.Received {
				t.Fatalf("%s: want a call that received bytes (its headers)", e)
			}
			if n := hooks.Load(); n != 0 {
				t.Fatalf("first-byte hooks ran %d time(s) for a stream that sent no chunk", n)
			}
		})
	}
	t.Run("openai/chunks", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			fmt.Fprint(w, ": keep-alive\n\n")
			sse(w, chunk("hello ", ""), chunk("world", "stop"), "[DONE]")
		})
		ctx, hooks := firstByteCount()
		if _, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(ctx, testRequest()); err != nil {
			t.Fatal(err)
		}
		if n := hooks.Load(); n != 1 {
			t.Fatalf("first-byte hooks ran %d time(s), want once (at the first chunk)", n)
		}
	})
	t.Run("anthropic/events", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, anthWhole...) })
		ctx, hooks := firstByteCount()
		if _, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(ctx, testRequest()); err != nil {
			t.Fatal(err)
		}
		if n := hooks.Load(); n != 1 {
			t.Fatalf("first-byte hooks ran %d time(s), want once (at the first event)", n)
		}
	})
}

// An unstreamed call's answer comes whole: its headers are its first byte,
// as before.
func TestUnstreamedCallBeginsAnsweringAtItsHeaders(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		// The body ends here, empty: not a chat completion.
	})
	ctx, hooks := firstByteCount()
	_, err := newTestAdapter(t, srv.URL, nil).Complete(ctx, testRequest())
	mustError(t, err)
	if n := hooks.Load(); n != 1 {
		t.Fatalf("first-byte hooks ran %d time(s), want once (at the headers)", n)
	}
}
