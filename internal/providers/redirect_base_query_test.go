package providers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The base_url suggested for a redirect the adapter does not follow keeps the
// configured base_url's query (Azure's ?api-version=…): without it the
// suggestion, copied into the configuration, sent every request without the
// api-version and failed.
func TestSuggestedBaseURLKeepsQuery(t *testing.T) {
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got := suggestBaseURL("http://h/openai/v1/?api-version=2024-10-21",
		u("http://h/openai/v1/chat/completions?api-version=2024-10-21"), u("https://h/openai/v1/chat/completions"))
	if want := "https://h/openai/v1?api-version=2024-10-21"; got != want {
		t.Fatalf("suggested %q, want %q", got, want)
	}

	for _, c := range []struct {
		name, base, path, want string
		adapter                func(t *testing.T, base string) Provider
	}{
		{"openai", "/openai/v1?api-version=2024-10-21", "/openai/v1/chat/completions", "/moved/openai/v1?api-version=2024-10-21",
			func(t *testing.T, base string) Provider { return newTestAdapter(t, base, nil) }},
		{"anthropic", "/proxy?tenant=a", "/proxy/v1/messages", "/moved/proxy?tenant=a",
			func(t *testing.T, base string) Provider { return newAnthropicAdapter(t, base, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				// A 301 turns the POST into a GET: refused, with the
				// base_url to set instead.
				http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusMovedPermanently)
			})
			_, err := c.adapter(t, srv.URL+c.base).Complete(context.Background(), testRequest())
			var re *RedirectError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want a *RedirectError", err)
			}
			if want := srv.URL + c.want; re.BaseURL != want {
				t.Fatalf("suggested base_url %q, want %q", re.BaseURL, want)
			}
			pe, _ := AsError(err)
			if pe == nil || !strings.Contains(pe.ProviderMessage, "set base_url to "+srv.URL+c.want) {
				t.Fatalf("error %+v does not suggest %s", pe, srv.URL+c.want)
			}
		})
	}
}
