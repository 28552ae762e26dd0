package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Anthropic-compatible proxies and company gateways that send the events'
// JSON as data: lines without the event: line before each (SSE's event field
// is optional, and every Messages API event names its type in its data) were
// read by the SDK as events of no type, which it skips: a whole answer — the
// provider generated and billed it — was "stream ended without message_stop
// after 0 events", stream_cut, failed over (paid twice), its usage lost; an
// error event the same way was a cut, not the error it reports. Found by
// review (ranth10, rstream10).
func TestAnthropicStreamWithoutEventLines(t *testing.T) {
	whole := strings.Join([]string{
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}`,
		`data: {"type":"content_block_stop","index":0}`,
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
		`data: {"type":"message_stop"}`,
	}, "\n\n") + "\n\n"
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(whole))
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
	resp, err := p.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatalf("whole answer without event: lines: %v", err)
	}
	if resp.Content != "hello" || resp.FinishReason != "stop" || resp.Usage.PromptTokens != 10 || resp.Usage.CompletionTokens != 5 {
		t.Errorf("got %q %q %+v, want hello, stop, 10+5 tokens", resp.Content, resp.FinishReason, resp.Usage)
	}

	srvErr := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n"))
	})
	p = newAnthropicAdapter(t, srvErr.URL, func(c *AnthropicConfig) { c.Stream = true })
	_, err = p.Complete(context.Background(), testRequest())
	if pe, _ := AsError(err); pe == nil || pe.Kind != KindUnavailable || !pe.AnsweredWithError {
		t.Errorf("error event without event: lines: got %v, want unavailable (overloaded_error), answered with error", err)
	}
}

// The whole message of anthWhole, its events as data: lines alone (with
// pings among them), through CompleteStream. (rstream10's test.)
func TestAnthropicDataOnlyEventsAreRead(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range anthWhole {
			fmt.Fprintf(w, "data: %s\r\n\r\ndata: {\"type\": \"ping\"}\n\n", ev)
		}
	})
	p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) {
		c.Stream, c.Timeout, c.StreamIdleTimeout = true, time.Minute, 10*time.Second
	})
	resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatalf("a whole message sent as data-only events failed: %v", err)
	}
	if resp.Content != "Hello world" {
		t.Fatalf("content %q", resp.Content)
	}
}

// readEventTypes reads body through sseEventTypes, one byte at a time (so
// that no line comes whole in one read).
func readEventTypes(t *testing.T, body string, limit int64) (string, error) {
	t.Helper()
	b, err := io.ReadAll(newSSEEventTypes(io.LimitReader(oneByteReader{strings.NewReader(body)}, 1<<20), limit))
	return string(b), err
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// A stream whose events have their event: lines — before or after the data,
// with comments, CRLF line ends, a last event without its blank line —
// passes byte for byte; an event without one is named by its data's type
// before its blank line, and one whose data names no type (not JSON, no
// "type", a type with a line break) passes as it came.
func TestSSEEventTypesFillsOnlyMissingEventLines(t *testing.T) {
	same := []string{
		"event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
		": keep-alive\r\n\r\nevent: ping\r\ndata: {\"type\":\"ping\"}\r\n\r\n",
		"data: {\"type\":\"message_stop\"}\nevent: message_stop\n\n",
		"event:message_stop\ndata:{\"type\":\"message_stop\"}\n\n",
		"data: not json\n\n",
		"data: {\"kind\":\"message_stop\"}\n\n",
		"data: {\"type\":\"a\\nb\"}\n\n",
		"data: {\"type\":\"message_stop\"}", // no blank line: no event
		"\n\n\n",
		"",
		// After an event: line the stream passes untouched, a data-only
		// event too (wanth59: no line copy for a stream that names its
		// events).
		"event: x\ndata: {}\n\ndata: {\"type\":\"message_start\"}\n\n",
	}
	for _, in := range same {
		got, err := readEventTypes(t, in, 1<<20)
		if err != nil || got != in {
			t.Errorf("read %q as %q (%v), want it unchanged", in, got, err)
		}
	}
	named := map[string]string{
		"data: {\"type\":\"message_stop\"}\n\n":                     "data: {\"type\":\"message_stop\"}\nevent: message_stop\n\n",
		"data: {\"type\":\"error\",\r\ndata: \"error\":{}}\r\n\r\n": "data: {\"type\":\"error\",\r\ndata: \"error\":{}}\r\nevent: error\n\r\n",
		": c\ndata:{\"type\":\"ping\"}\n\nevent: x\ndata: {}\n\n":   ": c\ndata:{\"type\":\"ping\"}\nevent: ping\n\nevent: x\ndata: {}\n\n",
	}
	for in, want := range named {
		got, err := readEventTypes(t, in, 1<<20)
		if err != nil || got != want {
			t.Errorf("read %q as %q (%v), want %q", in, got, err, want)
		}
	}
}

// A line, or an event's data, longer than the bound fails the read as past
// max_response_bytes, instead of being held in memory whole.
func TestSSEEventTypesBounded(t *testing.T) {
	for _, in := range []string{
		"data: " + strings.Repeat("x", 200) + "\n\n",
		strings.Repeat("data: "+strings.Repeat("x", 60)+"\n", 4) + "\n",
	} {
		_, err := readEventTypes(t, in, 100)
		var tl *ResponseTooLargeError
		if !errors.As(err, &tl) || tl.Limit != 100 {
			t.Errorf("read %d bytes with a bound of 100: %v, want a response too large error", len(in), err)
		}
	}
}
