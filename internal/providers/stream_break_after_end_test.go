package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// breakAfter answers a chunked SSE stream with body, waits for ready (the
// client has taken in the last event) and then ends the connection without
// the chunked terminator: with a reset (reset) or a plain close — a gateway
// that drops the connection right after the last event.
func breakAfter(t *testing.T, body string, reset bool, ready <-chan struct{}) http.HandlerFunc {
	release := releaseAtCleanup(t)
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
		_ = buf.Flush()
		select {
		case <-ready:
		case <-release:
		}
		if tc, ok := conn.(*net.TCPConn); ok && reset {
			_ = tc.SetLinger(0)
		}
	}
}

// onceCloser returns a channel and an onDelta that closes it when it sees
// the delta last.
func onceCloser(last string) (chan struct{}, func(string)) {
	ch := make(chan struct{})
	done := false
	return ch, func(d string) {
		if d == last && !done {
			done = true
			close(ch)
		}
	}
}

func anthropicSSEBody(events []string) string {
	var b strings.Builder
	for _, e := range events {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
	return b.String()
}

// A stream whose finish_reason (OpenAI) or message_stop (Anthropic) came is
// whole: the connection breaking right after it — reset, or closed without
// the chunked terminator — must not discard the answer (stream_cut, failed
// over and paid twice). A stream broken before its end is still cut. Found by
// review.
func TestStreamBrokenAfterItsEndIsWhole(t *testing.T) {
	for _, reset := range []bool{true, false} {
		name := map[bool]string{true: "reset", false: "closed"}[reset]
		t.Run(name, func(t *testing.T) {
			var ob strings.Builder
			for _, c := range []string{chunk("Hello", ""), chunk(" world", "stop")} {
				fmt.Fprintf(&ob, "data: %s\n\n", c)
			}
			ready, onDelta := onceCloser(" world")
			srv := newFakeServer(t, breakAfter(t, ob.String(), reset, ready))
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), onDelta)
			if err != nil {
				t.Errorf("openai: whole stream (finish_reason stop came) discarded when the connection broke after it: %v", err)
			} else if resp.Content != "Hello world" || resp.FinishReason != "stop" {
				t.Errorf("openai: response %q, finish %q", resp.Content, resp.FinishReason)
			}

			ready, onDelta = onceCloser("world")
			asrv := newFakeServer(t, breakAfter(t, anthropicSSEBody(anthWhole), reset, ready))
			aresp, err := newAnthropicAdapter(t, asrv.URL, func(c *AnthropicConfig) { c.Stream = true }).CompleteStream(context.Background(), testRequest(), onDelta)
			if err != nil {
				t.Errorf("anthropic: whole stream (message_stop came) discarded when the connection broke after it: %v", err)
			} else if aresp.Content != "Hello world" || aresp.Usage.CompletionTokens != 7 {
				t.Errorf("anthropic: response %q, usage %+v", aresp.Content, aresp.Usage)
			}
		})
	}
}

// The same break before the end (no finish_reason, no message_stop) is
// still a cut stream: only a whole answer is returned.
func TestStreamBrokenBeforeItsEndIsCut(t *testing.T) {
	for _, reset := range []bool{true, false} {
		ready, onDelta := onceCloser("Hello")
		srv := newFakeServer(t, breakAfter(t, "data: "+chunk("Hello", "")+"\n\n", reset, ready))
		_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), onDelta)
		if e := mustError(t, err); e.Kind != KindStreamCut || !e.Received {
			t.Errorf("openai, reset %v: %s received %v, want stream_cut received", reset, e.Kind, e.Received)
		}

		ready, onDelta = onceCloser("world")
		asrv := newFakeServer(t, breakAfter(t, anthropicSSEBody(anthWhole[:len(anthWhole)-1]), reset, ready))
		_, err = newAnthropicAdapter(t, asrv.URL, func(c *AnthropicConfig) { c.Stream = true }).CompleteStream(context.Background(), testRequest(), onDelta)
		if e := mustError(t, err); e.Kind != KindStreamCut || !e.Received {
			t.Errorf("anthropic, reset %v: %s received %v, want stream_cut received", reset, e.Kind, e.Received)
		}
	}
}
