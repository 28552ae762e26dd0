package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An error status whose body passes max_response_bytes must still be
// classified by its status: a 429 is rate_limited (retry, Retry-After kept),
// a 400 the caller's; and it is no answer the provider began (no status,
// Received) whose prompt the race would estimate as billed.
func TestOpenAIOversizedErrorBodyKeepsStatus(t *testing.T) {
	big := strings.Repeat("x", 10000)
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 429, map[string]string{"Retry-After": "2"}, apiErrorBody(big, "requests", nil, "rate_limit_exceeded"))
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.MaxResponseBytes = 4096 })
	_, err := p.Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.StatusCode != 429 || e.Kind != KindRateLimited || e.Action != ActionRetry || e.RetryAfter == 0 {
		t.Fatalf("got %s/%s HTTP %d retry-after %v received %v; want rate_limited/retry HTTP 429 with its Retry-After",
			e.Kind, e.Action, e.StatusCode, e.RetryAfter, e.Received)
	}
}

// The same for both adapters, streamed or not, and for a 400: an oversized
// error body is classified by its status (a 400 stops as the caller's, not a
// failover counted against the target), keeps its Retry-After, and is not
// Received (the race would estimate its prompt as billed).
func TestOversizedErrorBodyClassifiedByStatus(t *testing.T) {
	const limit = 4096
	big := strings.Repeat("x", 3*limit)
	type adapter struct {
		name string
		body func(status int) string
		call func(t *testing.T, url string, stream bool) error
	}
	adapters := []adapter{
		{"openai", func(status int) string {
			if status == 429 {
				return apiErrorBody(big, "requests", nil, "rate_limit_exceeded")
			}
			return apiErrorBody(big, "invalid_request_error", nil, nil)
		}, func(t *testing.T, url string, stream bool) error {
			p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.Stream, c.MaxResponseBytes = stream, limit })
			_, err := p.Complete(context.Background(), testRequest())
			return err
		}},
		{"anthropic", func(status int) string {
			typ := map[int]string{429: "rate_limit_error", 400: "invalid_request_error"}[status]
			return `{"type":"error","error":{"type":"` + typ + `","message":"` + big + `"}}`
		}, func(t *testing.T, url string, stream bool) error {
			p := newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.Stream, c.MaxResponseBytes = stream, limit })
			_, err := p.Complete(context.Background(), testRequest())
			return err
		}},
	}
	for _, a := range adapters {
		for _, c := range []struct {
			status int
			kind   Kind
			action Action
			retry  time.Duration
		}{
			{429, KindRateLimited, ActionRetry, 7 * time.Second},
			{400, KindBadRequest, ActionStop, 0},
		} {
			for _, stream := range []bool{false, true} {
				srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
					hdr := map[string]string{}
					if c.status == 429 {
						hdr["Retry-After"] = "7"
					}
					writeError(w, c.status, hdr, a.body(c.status))
				})
				e := mustError(t, a.call(t, srv.URL, stream))
				if e.Kind != c.kind || e.Action != c.action || e.StatusCode != c.status || e.RetryAfter != c.retry || e.Received {
					t.Errorf("%s HTTP %d stream=%v: got %s/%s HTTP %d retry-after %v received %v (%s); want %s/%s HTTP %d retry-after %v, not received",
						a.name, c.status, stream, e.Kind, e.Action, e.StatusCode, e.RetryAfter, e.Received, e.Message,
						c.kind, c.action, c.status, c.retry)
				}
			}
		}
	}
}
