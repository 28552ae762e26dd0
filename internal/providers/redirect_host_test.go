package providers

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// A 307 or 308 to another host was followed with the request's headers:
// net/http drops Authorization on such a redirect, but not Anthropic's
// x-api-key, so the target's key went to the new host. A redirect to
// another host is refused now, before anything is sent there, as the
// target's misconfiguration (failed over), like a redirect that would drop
// the POST; the router's log names the base_url to set. Found by review.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	var reached atomic.Int32
	other := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "should not be reached", http.StatusTeapot)
	})
	// The same server, named by another host: 127.0.0.1 redirects to localhost.
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(other.URL, "http://"))
	otherHost := "http://localhost:" + port
	for _, status := range []int{307, 308} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, otherHost+"/moved"+r.URL.Path, status)
		})
		for _, stream := range []bool{false, true} {
			for adapter, c := range map[string]struct {
				p    Provider
				base string
			}{
				"openai":    {newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.Stream = stream }), otherHost + "/moved/v1"},
				"anthropic": {newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }), otherHost + "/moved"},
			} {
				_, err := c.p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != KindMisconfigured || e.Action != ActionFailover || e.StatusCode != status {
					t.Errorf("%s HTTP %d stream=%v: %s/%s status %d, want misconfigured/failover status %d (%q)", adapter, status, stream, e.Kind, e.Action, e.StatusCode, status, e.Message)
				}
				if !strings.Contains(e.Message, "another host") || strings.Contains(e.Message, "localhost") {
					t.Errorf("%s HTTP %d stream=%v: the attempt's message should say another host, naming none: %q", adapter, status, stream, e.Message)
				}
				if !strings.Contains(e.ProviderMessage, "set base_url to "+c.base) {
					t.Errorf("%s HTTP %d stream=%v: the log's message does not say which base_url to set (%s): %q", adapter, status, stream, c.base, e.ProviderMessage)
				}
			}
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d requests reached the other host", n)
	}
}

// After a followed 307, a connection reset before the next response's
// headers was classified by the 307 (kind unknown), the last status the
// call saw; and the Anthropic adapter took the 307's headers for the
// answer's first byte. It is a connection reset now, before any response
// byte: retried, not marked received. Found by review.
func TestResetAfterFollowedRedirectIsConnectionReset(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/moved") {
			http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.(*net.TCPConn).SetLinger(0) // a reset, not a clean close
		conn.Close()
	})
	for _, stream := range []bool{false, true} {
		for adapter, p := range map[string]Provider{
			"openai":    newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.Stream = stream }),
			"anthropic": newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }),
		} {
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != KindConnReset || e.Action != ActionRetry || e.Received {
				t.Errorf("%s stream=%v: %s/%s received=%v, want connection_reset/retry not received (%v)", adapter, stream, e.Kind, e.Action, e.Received, e)
			}
		}
	}
}
