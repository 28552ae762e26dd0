package providers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

// rawServer serves every connection to a local listener with serve, for
// servers net/http will not play (broken framing, no HTTP at all). It
// returns a base_url that reaches it.
func rawServer(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serve(c) }()
		}
	}()
	return "http://" + l.Addr().String() + "/v1"
}

// readRequest reads one HTTP request, body and all, from c.
func readRequest(c net.Conn) {
	if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
}

// A 2xx answer whose body breaks on bad framing (a chunk length that is not
// hex), not on an early end, is malformed_response received, as a body that
// breaks off is: the provider answered, and the attempt's prompt is billed.
// It was kind unknown, not received. Found by review.
func TestBadChunking2xx(t *testing.T) {
	url := rawServer(t, func(c net.Conn) {
		readRequest(c)
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
	})
	for name, p := range map[string]Provider{
		"openai":    newTestAdapter(t, url, nil),
		"anthropic": newAnthropicAdapter(t, url, nil),
	} {
		_, err := p.Complete(context.Background(), testRequest())
		if e := mustError(t, err); e.Kind != KindMalformedResponse || !e.Received {
			t.Errorf("%s: %s received=%v (%s), want malformed_response received", name, e.Kind, e.Received, e.Message)
		}
	}
}

// The same for a streamed answer: stream_cut received.
func TestBadChunking2xxStream(t *testing.T) {
	url := rawServer(t, func(c net.Conn) {
		readRequest(c)
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
	})
	for name, p := range map[string]Provider{
		"openai":    newTestAdapter(t, url, func(c *OpenAIConfig) { c.Stream = true }),
		"anthropic": newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.Stream = true }),
	} {
		_, err := p.Complete(context.Background(), testRequest())
		if e := mustError(t, err); !e.Received || (e.Kind != KindStreamCut && e.Kind != KindStreamMalformed) {
			t.Errorf("%s: %s received=%v (%s), want stream_cut received", name, e.Kind, e.Received, e.Message)
		}
	}
}
