package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// A 413 or 400 whose body is a proxy's HTML page (nginx's default
// client_max_body_size is 1 MB; Cloudflare's "Request Header Or Cookie Too
// Large") is, in the router's own words, "an HTML page from a proxy or CDN in
// front of it, not the API's error": the limit of the proxy in front of this
// one target, not a verdict of any provider's API on the request. Another
// target of the route (OpenAI takes request bodies of many MB) may take the
// same request, so it must fail over, not stop the job with the caller told to
// correct the request. (Kept the caller's fault, so that the breaker does not
// count a large request.) It was bad_request, stop.
func TestProxyPage4xxFailsOver(t *testing.T) {
	for _, tc := range []struct {
		status int
		page   string
	}{
		{413, `<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx/1.25.3</center></body></html>`},
		{400, `<html><head><title>400 Bad Request</title></head><body><center><h1>400 Bad Request</h1></center><center>Request Header Or Cookie Too Large</center><hr><center>cloudflare</center></body></html>`},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/stream=%v", tc.status, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(tc.status)
					_, _ = w.Write([]byte(tc.page))
				})
				_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
				e, ok := AsError(err)
				if !ok {
					t.Fatalf("error %v is no *Error", err)
				}
				if e.Action != ActionFailover {
					t.Fatalf("HTTP %d proxy page: kind %s fault %s action %s, want failover (message %q)", tc.status, e.Kind, e.Fault, e.Action, e.Message)
				}
			})
		}
	}
}
