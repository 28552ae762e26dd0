package providers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// guardRedirects compared only the host's name: a 307 or 308 from an https
// base_url to plain http on the same host, or to another port of it, was
// followed, and net/http keeps Authorization for the same host — the key
// and the prompt went out unencrypted (curl's CVE-2022-27776), or to
// another server on that host. Both are refused now, as the target's
// misconfiguration. Found by review.
func TestRedirectDowngradeOrOtherPortIsRefused(t *testing.T) {
	var keys atomic.Int32
	plain := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			keys.Add(1)
		}
		http.Error(w, "should not be reached", http.StatusTeapot)
	})
	for _, status := range []int{307, 308} {
		redirect := func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, plain.URL+r.URL.Path, status)
		}
		tlsSrv := httptest.NewTLSServer(http.HandlerFunc(redirect))
		t.Cleanup(tlsSrv.Close)
		otherPort := newFakeServer(t, redirect) // http on 127.0.0.1, another port
		for _, c := range []struct {
			name, base string
			client     *http.Client
			insecure   bool
		}{
			{"https to http", tlsSrv.URL, tlsSrv.Client(), true},
			{"other port", otherPort.URL, nil, false},
		} {
			for _, stream := range []bool{false, true} {
				for adapter, p := range map[string]Provider{
					"openai": newTestAdapter(t, c.base+"/v1?key=gw-secret-value-123", func(o *OpenAIConfig) {
						o.HTTPClient, o.Stream, o.APIKey = c.client, stream, testSecretKey
					}),
					"anthropic": newAnthropicAdapter(t, c.base+"?key=gw-secret-value-123", func(o *AnthropicConfig) {
						o.HTTPClient, o.Stream, o.APIKey = c.client, stream, testSecretKey
					}),
				} {
					what := c.name + " " + adapter
					if stream {
						what += " stream"
					}
					_, err := p.Complete(context.Background(), testRequest())
					e := mustError(t, err)
					if e.Kind != KindMisconfigured || e.Action != ActionFailover || e.StatusCode != status {
						t.Errorf("%s HTTP %d: %s/%s status %d, want misconfigured/failover %d (%q)", what, status, e.Kind, e.Action, e.StatusCode, status, e.Message)
					}
					want := "another port"
					if c.insecure {
						want = "from https to plain http"
					}
					if !strings.Contains(e.Message, want) || strings.Contains(e.Message, "127.0.0.1") {
						t.Errorf("%s: the attempt's message should say %q, naming no address: %q", what, want, e.Message)
					}
					if !strings.Contains(e.ProviderMessage, want) || !strings.Contains(e.ProviderMessage, plain.URL) || !strings.Contains(e.ProviderMessage, c.base) {
						t.Errorf("%s: the log's message should say %q and name both addresses: %q", what, want, e.ProviderMessage)
					}
					assertNoSecret(t, what, err, "gw-secret-value-123")
				}
			}
		}
	}
	if n := keys.Load(); n != 0 {
		t.Errorf("the plain-http server on another port received the API key %d times", n)
	}
}

// Redirects that keep the method and the body (307, 308) on base_url's host
// and port are followed, as before (TestRedirectKeepingThePostIsFollowed
// redirected to another port, refused now).
func TestRedirectOnTheSamePortIsFollowed(t *testing.T) {
	for _, status := range []int{307, 308} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/moved") {
				http.Redirect(w, r, "/moved"+r.URL.Path, status)
				return
			}
			if r.Method != http.MethodPost {
				http.Error(w, "want POST", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			if strings.HasSuffix(r.URL.Path, "/v1/messages") {
				fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
				return
			}
			fmt.Fprint(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
		})
		for adapter, p := range map[string]Provider{
			"openai":    newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.Stream = false }),
			"anthropic": newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = false }),
		} {
			resp, err := p.Complete(context.Background(), testRequest())
			if err != nil || resp.Content != "hi" {
				t.Errorf("%s HTTP %d: %v, %+v", adapter, status, err, resp)
			}
		}
	}
}

// An http base_url upgraded to https on its default port is followed, as
// before; any other change of scheme or port is not.
func TestSamePort(t *testing.T) {
	for _, c := range []struct {
		from, to string
		same     bool
	}{
		{"http://h/v1", "https://h/v1", true},
		{"http://h:8080/v1", "https://h/v1", true},
		{"http://h/v1", "https://h:443/v1", true},
		{"https://h/v1", "https://h:443/v1", true},
		{"http://h/v1", "http://h:80/v1", true},
		{"http://h/v1", "https://h:8443/v1", false},
		{"https://h/v1", "https://h:8443/v1", false},
		{"http://h:8080/v1", "http://h:9090/v1", false},
		{"https://h/v1", "http://h:443/v1", false},
	} {
		from, _ := url.Parse(c.from)
		to, _ := url.Parse(c.to)
		if got := samePort(from, to); got != c.same {
			t.Errorf("%s → %s: same port %v, want %v", c.from, c.to, got, c.same)
		}
	}
}

// A gateway's key in base_url's query was repeated in the base_url a
// refused redirect suggests (logged), and in the redirect's address;
// their long query values are shown as … now, a version's kept.
func TestRedirectSuggestionHidesQueryValues(t *testing.T) {
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got := suggestBaseURL("http://h/v1?api-version=2024-10-21&key=gw-secret-value-123&t=a",
		u("http://h/v1/chat/completions"), u("https://h/v1/chat/completions"))
	if want := "https://h/v1?api-version=2024-10-21&key=…&t=a"; got != want {
		t.Fatalf("suggested %q, want %q", got, want)
	}

	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved"+r.URL.Path+"?sig=sigsecret-456789", http.StatusMovedPermanently)
	})
	_, err := newTestAdapter(t, srv.URL+"/v1?key=gw-secret-value-123", nil).Complete(context.Background(), testRequest())
	e := mustError(t, err)
	assertNoSecret(t, "301", err, "gw-secret-value-123", "sigsecret-456789")
	if !strings.Contains(e.ProviderMessage, "set base_url to "+srv.URL+"/moved/v1?key=… (with base_url's query values where it shows …)") {
		t.Errorf("the log's message should suggest the base_url with its query's value hidden: %q", e.ProviderMessage)
	}
}
