package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A streamed Anthropic call answered with an error status (429, 5xx, 529)
// was marked received: the transport reports every response's headers as
// the first byte, error statuses included. The same status unstreamed, or
// through the OpenAI adapter, is not received, and the race reads Received
// for its hedging statistics and its deadline labels. Found by review.
func TestAnthropicStreamErrorStatusNotReceived(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		kind   Kind
	}{
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, KindRateLimited},
		{500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, KindServerError},
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, KindUnavailable},
	} {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				writeError(w, c.status, map[string]string{"retry-after": "7"}, c.body)
			})
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != c.kind || e.StatusCode != c.status || e.RetryAfter != 7*time.Second || e.Received {
				t.Errorf("HTTP %d stream=%v: kind %s status %d retry-after %v received %v", c.status, stream, e.Kind, e.StatusCode, e.RetryAfter, e.Received)
			}
		}
	}
}
