package providers

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A redirect loop (307 to the same address, past the client's ten
// redirects) is the target's misconfiguration, failed over, in both
// adapters, as other refused redirects are: it was kind unknown. Found by
// review.
func TestRedirectLoop(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, r.URL.Path, http.StatusTemporaryRedirect)
	})
	for name, p := range map[string]Provider{
		"openai":    newTestAdapter(t, srv.URL, nil),
		"anthropic": newAnthropicAdapter(t, srv.URL, nil),
	} {
		_, err := p.Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindMisconfigured || e.Action != ActionFailover {
			t.Errorf("%s: %s/%s (%s), want misconfigured/failover", name, e.Kind, e.Action, e.Message)
		}
		if !strings.Contains(e.Message, "more than 10 times") || strings.Contains(e.Message, "127.0.0.1") {
			t.Errorf("%s: message %q should say the redirects went on and name no address", name, e.Message)
		}
	}
}
