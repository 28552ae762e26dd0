package providers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// A redirect that net/http would follow as a GET (301, 302, 303: base_url
// says http:// where the provider redirects to https://) is refused as the
// target's misconfiguration, failed over, before any GET is sent: the
// attempt names the status, and the router's log (ProviderMessage) the
// base_url to set. Before, the GET was sent, and its 405 stopped the job as
// the caller's bad request. Found by review.
func TestRedirectThatDropsThePostIsMisconfigured(t *testing.T) {
	var gets atomic.Int32
	target := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			gets.Add(1)
		}
		http.Error(w, `{"detail":"Method Not Allowed"}`, http.StatusMethodNotAllowed)
	})
	for _, status := range []int{301, 302, 303} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/moved"+r.URL.Path, status)
		})
		for _, stream := range []bool{false, true} {
			for adapter, c := range map[string]struct {
				p    Provider
				base string // the base_url that reaches target directly
			}{
				"openai":    {newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.Stream = stream }), target.URL + "/moved/v1"},
				"anthropic": {newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }), target.URL + "/moved"},
			} {
				_, err := c.p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != KindMisconfigured || e.Action != ActionFailover || e.StatusCode != status {
					t.Errorf("%s HTTP %d stream=%v: %s/%s status %d, want misconfigured/failover status %d (%q)", adapter, status, stream, e.Kind, e.Action, e.StatusCode, status, e.Message)
				}
				if !strings.Contains(e.Message, fmt.Sprint(status)) || strings.Contains(e.Message, "127.0.0.1") {
					t.Errorf("%s HTTP %d stream=%v: the attempt's message should name the status and no address: %q", adapter, status, stream, e.Message)
				}
				if !strings.Contains(e.ProviderMessage, "set base_url to "+c.base) {
					t.Errorf("%s HTTP %d stream=%v: the log's message does not say which base_url to set (%s): %q", adapter, status, stream, c.base, e.ProviderMessage)
				}
			}
		}
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("%d requests were resent as GET", n)
	}
}

// The suggested base_url is the redirect's target without the path the
// adapter appends; unknown when the redirect changes that path.
func TestSuggestBaseURL(t *testing.T) {
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct{ base, from, to, want string }{
		{"http://h/v1", "http://h/v1/chat/completions", "https://h/v1/chat/completions", "https://h/v1"},
		{"http://h/v1/", "http://h/v1/chat/completions", "https://h:8443/api/v1/chat/completions", "https://h:8443/api/v1"},
		{"http://h/", "http://h/v1/messages", "https://h/v1/messages", "https://h"},
		{"http://h/v1", "http://h/v1/chat/completions", "https://h/", ""},
	} {
		if got := suggestBaseURL(c.base, u(c.from), u(c.to)); got != c.want {
			t.Errorf("%s, %s → %s: %q, want %q", c.base, c.from, c.to, got, c.want)
		}
	}
}
