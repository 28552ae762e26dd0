package providers

import (
	"context"
	"net/http"
	"testing"
)

// A status net/http has no name for (529, which gateways in front of
// Anthropic-compatible and other APIs send when overloaded; 520 from a CDN)
// with an empty body left the attempt's message
// empty on the OpenAI-compatible adapter: "provider x: unavailable (HTTP
// 529)" and nothing after it. The Anthropic adapter's words are used.
func TestOpenAIUnnamedStatusHasAMessage(t *testing.T) {
	for status, want := range map[int]string{
		529: "HTTP 529: the provider is overloaded",
		520: "HTTP 520",
		503: "Service Unavailable",
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status) // no body: nothing to quote
		})
		_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		pe, ok := AsError(err)
		if !ok || pe.StatusCode != status {
			t.Fatalf("HTTP %d: %v", status, err)
		}
		if pe.Message != want {
			t.Errorf("HTTP %d: message %q, want %q", status, pe.Message, want)
		}
	}
}
