package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// An error status net/http has no name for (529, Anthropic's overloaded; a
// proxy's 520) with a body that is not JSON (a proxy's HTML page, or none)
// gave an error with an empty message: the attempt and the job's error said
// only "unavailable (HTTP 529)". The message names the status now, and what
// 529 means. Found by review.
func TestAnthropicUnnamedStatusHasAMessage(t *testing.T) {
	const proxyPageWords = "an HTML page from a proxy or CDN in front of it, not the API's error; if it recurs, check the provider's status and the target's base_url"
	cases := []struct {
		status int
		body   string
		kind   Kind
		want   string
	}{
		{529, "", KindUnavailable, "HTTP 529: the provider is overloaded"},
		{520, "upstream said nothing", KindServerError, "HTTP 520"},
		{503, "", KindUnavailable, "Service Unavailable"}, // a named status keeps its name
		// A proxy's page is described as one (pageMessage), as for OpenAI.
		{529, "<html><body>Overloaded</body></html>", KindUnavailable, "HTTP 529 from the target: " + proxyPageWords},
		{503, "<html>busy</html>", KindUnavailable, "HTTP 503 from the target: " + proxyPageWords},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d %q stream %v", c.status, c.body, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(c.status)
					fmt.Fprint(w, c.body)
				})
				_, err := newAnthropicAdapter(t, srv.URL, func(a *AnthropicConfig) { a.Stream = stream }).Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != c.kind || e.StatusCode != c.status {
					t.Fatalf("%s (HTTP %d): want %s (HTTP %d)", e.Kind, e.StatusCode, c.kind, c.status)
				}
				if e.Message != c.want {
					t.Fatalf("message %q, want %q", e.Message, c.want)
				}
			})
		}
	}
}
