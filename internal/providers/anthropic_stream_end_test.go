package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// anthWhole is a whole streamed message: "Hello world", 12 input tokens and
// 7 output tokens, ended by message_stop.
var anthWhole = []string{
	`{"type":"message_start","message":{"id":"msg_whole","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello "}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"world"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`,
	`{"type":"message_stop"}`,
}

// A gateway that leaves the connection open after message_stop (it neither
// ends the chunked body nor closes) made the adapter wait for an end of body
// that never came: a whole, billed answer failed as stream_stalled (or
// stream_timeout without an idle deadline). The message is whole at
// message_stop: when the idle deadline passes after it, the answer is
// returned and the body closed. Found by review.
func TestAnthropicStreamEndsAtMessageStop(t *testing.T) {
	closed := make(chan struct{})
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		anthSSE(w, anthWhole...)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client went away: it closed the body
		close(closed)
	})
	// The idle deadline is what ends the wait for an end of body that does
	// not come.
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) {
		c.Stream = true
		c.StreamIdleTimeout = 300 * time.Millisecond
	})
	var deltas string
	resp, err := p.CompleteStream(context.Background(), testRequest(), func(s string) { deltas += s })
	if err != nil {
		t.Fatalf("a whole message failed: %v", err)
	}
	if resp.Content != "Hello world" || deltas != "Hello world" || resp.FinishReason != "stop" || resp.ResponseID != "msg_whole" {
		t.Fatalf("response %+v, deltas %q", resp, deltas)
	}
	if resp.Usage.PromptTokens != 12 || resp.Usage.CompletionTokens != 7 {
		t.Fatalf("usage %+v, want 12 prompt and 7 completion tokens", resp.Usage)
	}
	// The body was closed, not left open with the connection: the server
	// sees its client go.
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the response body was left open after message_stop")
	}
}

// message_delta's usage is cumulative, and the adapter took each one's
// output_tokens as the total: a second message_delta without a usage object
// (or one whose usage leaves output_tokens out) zeroed the output tokens
// counted so far, and the answer was recorded and priced as if it had none.
// Found by review.
func TestAnthropicMessageDeltaWithoutUsageKeepsOutputTokens(t *testing.T) {
	cases := map[string]string{
		"no usage":                 `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}`,
		"usage without output":     `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":12}}`,
		"usage with output, later": `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`,
	}
	for name, second := range cases {
		t.Run(name, func(t *testing.T) {
			evs := append(append(append([]string(nil), anthWhole[:6]...), second), anthWhole[6])
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
			resp, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
			if err != nil {
				t.Fatal(err)
			}
			want := 7
			if name == "usage with output, later" {
				want = 9 // a later count is the total
			}
			if resp.Usage.CompletionTokens != want || resp.Usage.PromptTokens != 12 {
				t.Fatalf("usage %+v, want 12 prompt and %d completion tokens", resp.Usage, want)
			}
		})
	}
}

// The stream is read to the end of its body, not cut at message_stop: a body
// closed unread closes an HTTP/1.1 connection (a gateway in front of the API,
// over plain HTTP) instead of returning it to the pool. The server here ends
// its body a moment after message_stop, as one on a network does.
func TestAnthropicStreamKeepsItsConnection(t *testing.T) {
	keepsOneConnection(t, func(w http.ResponseWriter, r *http.Request) {
		anthSSE(w, anthWhole...)
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond) // the provider's network, not a synchronisation
	}, func(url string) Streamer {
		return newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.Stream = true })
	})
}
