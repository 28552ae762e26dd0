package providers

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A non-streamed Anthropic answer that a gateway relabels text/plain, or
// sends with no Content-Type, is read as the answer it is: the SDK refused
// it ("expected destination type of 'string' or '[]byte' for responses with
// content-type … that is not 'application/json'"), and the billed answer
// was discarded as kind unknown, not received. Found by review.
func TestAnthropicLooseContentTypeAnswer(t *testing.T) {
	for _, ct := range []string{"text/plain; charset=utf-8", ""} {
		t.Run("content-type "+ct, func(t *testing.T) {
			fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: `{"a":1}`, Model: "claude-test", InputTokens: 3, OutputTokens: 2}))
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				req, _ := http.NewRequestWithContext(r.Context(), "POST", fake.URL+r.URL.Path, r.Body)
				req.Header = r.Header.Clone()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				w.Header()["Content-Type"] = []string{ct}
				if ct == "" {
					w.Header()["Content-Type"] = nil
				}
				_, _ = io.Copy(w, resp.Body)
			})
			resp, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("a valid answer labelled %q refused: %v (received=%v)", ct, err, mustError(t, err).Received)
			}
			if resp.Content != `{"a":1}` {
				t.Fatalf("content %q", resp.Content)
			}
			if resp.Usage.PromptTokens != 3 || resp.Usage.CompletionTokens != 2 {
				t.Fatalf("usage %+v, want 3 in 2 out", resp.Usage)
			}
		})
	}
}

// A 2xx non-streamed Anthropic answer that does not decode, whatever the
// reason the SDK gives, is malformed_response received: the provider
// answered (and may have billed), so the outcome is known.
func TestAnthropicUndecodable2xxReceived(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "upstream says hello")
	})
	_, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	if e := mustError(t, err); e.Kind != KindMalformedResponse || !e.Received {
		t.Fatalf("%s received=%v (%s), want malformed_response received", e.Kind, e.Received, e.Message)
	}
}
