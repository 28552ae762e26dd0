package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// testSecretKey is a key long enough to be redacted (minSecret).
const testSecretKey = "sk-secret-0123456789abcdef"

// echoedKey is what a provider or proxy that echoes the request's
// credentials quotes: the Authorization header (both adapters send the key
// there), or a gateway's x-api-key, and the URL's query.
func echoedKey(r *http.Request) string {
	return "Authorization: " + r.Header.Get("Authorization") + " x-api-key: " + r.Header.Get("X-Api-Key") + " query: " + r.URL.RawQuery
}

// assertNoSecret fails when any of e's shown or logged texts holds a secret,
// or 8 bytes of its start (a message cut to its bound).
func assertNoSecret(t *testing.T, what string, err error, secrets ...string) {
	t.Helper()
	e := mustError(t, err)
	for _, s := range secrets {
		for field, text := range map[string]string{"Message": e.Message, "ProviderMessage": e.ProviderMessage, "Code": e.Code, "Error()": e.Error()} {
			if strings.Contains(text, s[:8]) {
				t.Errorf("%s: %s holds the secret %q: %q", what, field, s, text)
			}
		}
	}
}

// A provider or a proxy in front of it that echoes the request's
// Authorization header (or the URL, with a gateway's ?key=…) in an error
// body put the router's API key into the attempt's error message: shown to
// the job's owner (GET /v1/jobs/{id}, the chat error), stored, logged. Only
// the messages of failures about the router's account (401, 403, 429,
// quota) were kept out of Message, and those stayed in ProviderMessage,
// logged. The key and base_url's long query values are removed from every
// text of the error now. Found by review.
func TestProviderEchoingTheKeyIsRedacted(t *testing.T) {
	const querySecret = "gw-tenant-secret-9876543210"
	long := strings.Repeat("x", 280) + " " // cuts the key at the message's bound
	bodies := map[string]func(w http.ResponseWriter, r *http.Request, anthropic bool){
		"400 json": func(w http.ResponseWriter, r *http.Request, anthropic bool) {
			writeAPIError(w, http.StatusBadRequest, anthropic, "invalid_request_error", r.Header.Get("Authorization"), "bad header "+echoedKey(r))
		},
		"400 json cut": func(w http.ResponseWriter, r *http.Request, anthropic bool) {
			writeAPIError(w, http.StatusBadRequest, anthropic, "invalid_request_error", "", long+r.Header.Get("Authorization"))
		},
		"500 json": func(w http.ResponseWriter, r *http.Request, anthropic bool) {
			writeAPIError(w, http.StatusInternalServerError, anthropic, "api_error", "", "upstream failed for "+echoedKey(r))
		},
		"405 json": func(w http.ResponseWriter, r *http.Request, anthropic bool) {
			writeAPIError(w, http.StatusMethodNotAllowed, anthropic, "", "", "method not allowed: "+echoedKey(r))
		},
		"502 plain": func(w http.ResponseWriter, r *http.Request, anthropic bool) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "Bad Gateway: upstream refused the request with "+echoedKey(r))
		},
		"stream error event": func(w http.ResponseWriter, r *http.Request, anthropic bool) {
			startStream(w)
			msg, _ := json.Marshal("overloaded: " + echoedKey(r))
			if anthropic {
				fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":%s}}\n\n", msg)
			} else {
				sse(w, fmt.Sprintf(`{"error":{"message":%s,"type":"server_error"}}`, msg))
			}
			w.(http.Flusher).Flush()
		},
	}
	for name, body := range bodies {
		for _, stream := range []bool{false, true} {
			if name == "stream error event" && !stream {
				continue
			}
			for _, anthropic := range []bool{false, true} {
				what := fmt.Sprintf("%s anthropic=%v stream=%v", name, anthropic, stream)
				srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { body(w, r, anthropic) })
				var p Provider
				if anthropic {
					p = newAnthropicAdapter(t, srv.URL+"/gw?key="+querySecret, func(c *AnthropicConfig) { c.APIKey, c.Stream = testSecretKey, stream })
				} else {
					p = newTestAdapter(t, srv.URL+"/v1?key="+querySecret, func(c *OpenAIConfig) { c.APIKey, c.Stream = testSecretKey, stream })
				}
				_, err := p.Complete(context.Background(), testRequest())
				assertNoSecret(t, what, err, testSecretKey, querySecret)
				if e := mustError(t, err); !(anthropic && name == "502 plain") && !strings.Contains(e.Message+e.ProviderMessage, redacted) {
					// (The Anthropic adapter words a plain-text 5xx by its status.)
					t.Errorf("%s: the provider's text should be kept, its secrets %s: %q / %q", what, redacted, e.Message, e.ProviderMessage)
				}
			}
		}
	}
}

// The Anthropic SDK sends the key as a bearer token, in Authorization, not
// as x-api-key: what net/http drops on a redirect to another host, and
// what a proxy echoing Authorization quotes.
func TestAnthropicSendsTheKeyInAuthorization(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		writeAPIError(w, http.StatusBadRequest, true, "invalid_request_error", "", "no")
	})
	_, _ = newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.APIKey = testSecretKey }).Complete(context.Background(), testRequest())
	h := <-got
	if h.Get("Authorization") != "Bearer "+testSecretKey || h.Get("X-Api-Key") != "" {
		t.Fatalf("Authorization %q, x-api-key %q: want the key as a bearer token only", h.Get("Authorization"), h.Get("X-Api-Key"))
	}
}

// Lookup's errors are the provider's text too.
func TestLookupEchoingTheKeyIsRedacted(t *testing.T) {
	for name, status := range map[string]int{"400": 400, "500": 500, "405": 405} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			writeAPIError(w, status, false, "invalid_request_error", r.Header.Get("Authorization"), "bad: "+echoedKey(r))
		})
		p := newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.APIKey, c.SupportsLookup = testSecretKey, true })
		_, _, err := p.Lookup(context.Background(), "att-1")
		assertNoSecret(t, "lookup "+name, err, testSecretKey)
	}
}

// A short key (a local server's "none", a test's) is not redacted: it
// would mangle ordinary words.
func TestShortKeyIsNotRedacted(t *testing.T) {
	r := newRedactor("none", "http://h/v1?api-version=2024-10-21&tenant=a")
	if got := r.text("none of api-version 2024-10-21 for tenant a"); got != "none of api-version 2024-10-21 for tenant a" {
		t.Fatalf("redacted %q", got)
	}
}

func writeAPIError(w http.ResponseWriter, status int, anthropic bool, typ, code, msg string) {
	m, _ := json.Marshal(msg)
	c, _ := json.Marshal(code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if anthropic {
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%s}}`, typ, m)
		return
	}
	fmt.Fprintf(w, `{"error":{"message":%s,"type":%q,"code":%s}}`, m, typ, c)
}
