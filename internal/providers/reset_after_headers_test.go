package providers

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// A connection cut after the response's first byte and before its headers
// were whole (a reset between header lines, a status line or a header name
// broken off) was connection_reset — retried on the same target, as a reset
// before any response byte is (SPEC §6.2), not Received — or, for a line
// broken off, misconfigured ("does not answer as an HTTP API"). Response
// bytes had come: the provider had the request; the outcome is known
// (SPEC §15) and the call fails over: malformed_response, stream_cut when
// streamed. Both adapters. Found by review.
func TestResetAfterResponseHeadersIsNotRetried(t *testing.T) {
	for _, reply := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n", // reset between header lines
		"HTTP/1.1 20",                   // inside the status code
		"HTT",                           // inside the version
		"HTTP/1.1 200 OK\r\nContent-Ty", // inside a header's name
	} {
		for _, rst := range []bool{true, false} {
			url := rawServer(t, func(c net.Conn) {
				readRequest(c)
				c.Write([]byte(reply))
				if rst {
					c.(*net.TCPConn).SetLinger(0) // RST
				}
			})
			for _, stream := range []bool{false, true} {
				for name, p := range map[string]Provider{
					"openai":    newTestAdapter(t, url, func(c *OpenAIConfig) { c.Stream = stream; c.Timeout = 2 * time.Second }),
					"anthropic": newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.Stream = stream; c.Timeout = 2 * time.Second }),
				} {
					t.Run(fmt.Sprintf("%s/%q/rst=%v/stream=%v", name, reply, rst, stream), func(t *testing.T) {
						_, err := p.Complete(context.Background(), testRequest())
						e := mustError(t, err)
						if e.Action == ActionRetry || !e.Received {
							t.Errorf("got kind=%s action=%s received=%v (%q): response bytes had come, so the same target must not be retried and the outcome is known",
								e.Kind, e.Action, e.Received, e.Message)
						}
						want := KindMalformedResponse
						if stream {
							want = KindStreamCut
						}
						if e.Kind != want || e.OutcomeUnknown || e.Action != ActionFailover {
							t.Errorf("got %s/%s unknown=%v (%q), want %s/failover, known", e.Kind, e.Action, e.OutcomeUnknown, e.Message, want)
						}
					})
				}
			}
		}
	}
}

// A reset before any response byte is still connection_reset, retried on the
// same target (SPEC §6.2), not Received.
func TestResetBeforeAnyResponseByteIsRetried(t *testing.T) {
	url := rawServer(t, func(c net.Conn) {
		readRequest(c)
		c.(*net.TCPConn).SetLinger(0)
	})
	for name, p := range map[string]Provider{
		"openai":    newTestAdapter(t, url, nil),
		"anthropic": newAnthropicAdapter(t, url, nil),
	} {
		_, err := p.Complete(context.Background(), testRequest())
		if e := mustError(t, err); e.Kind != KindConnReset || e.Action != ActionRetry || e.Received {
			t.Errorf("%s: got %s/%s received=%v (%q), want connection_reset/retry, not received", name, e.Kind, e.Action, e.Received, e.Message)
		}
	}
}
