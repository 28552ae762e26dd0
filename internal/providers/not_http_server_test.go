package providers

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
)

// A server at base_url that does not speak HTTP (an SSH banner, a status
// line that is not HTTP's, a header line with no colon) is the target's
// misconfiguration, failed over: it was kind unknown. Found by review.
// Headers past the client's bound are response_too_large
// (response_header_bound_test.go).
func TestNotAnHTTPServer(t *testing.T) {
	replies := map[string]string{
		"ssh banner":           "SSH-2.0-OpenSSH_9.6\r\n",
		"bad status code":      "HTTP/1.1 2x0 OK\r\n\r\n",
		"header with no colon": "HTTP/1.1 200 OK\r\nContent-Type application/json\r\n\r\n{}",
		"huge headers":         "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 11<<20) + "\r\n\r\n{}",
	}
	want := func(what string) Kind {
		if what == "huge headers" {
			return KindResponseTooLarge
		}
		return KindMisconfigured
	}
	for what, reply := range replies {
		url := rawServer(t, func(c net.Conn) {
			readRequest(c)
			_, _ = io.WriteString(c, reply)
		})
		for name, p := range map[string]Provider{
			"openai":    newTestAdapter(t, url, nil),
			"anthropic": newAnthropicAdapter(t, url, nil),
		} {
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != want(what) || e.Action != ActionFailover {
				t.Errorf("%s, %s: %s/%s (%s), want %s/failover", what, name, e.Kind, e.Action, e.Message, want(what))
			}
		}
	}
}
