package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// Anthropic says in anthropic-ratelimit-<budget>-reset (an RFC 3339 time)
// when each budget is full again. A 429 whose retry-after a proxy stripped
// was retried after a short backoff, and refused again, though the headers
// said when the exhausted budget refills: that reset is its RetryAfter now,
// streamed or not, so a reset beyond max_retry_after fails over at once.
func TestAnthropicRateLimitResetHeaders(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			now := time.Now()
			h := w.Header()
			h.Set("anthropic-ratelimit-requests-limit", "50")
			h.Set("anthropic-ratelimit-requests-remaining", "49")
			h.Set("anthropic-ratelimit-requests-reset", now.Add(time.Second).UTC().Format(time.RFC3339))
			h.Set("anthropic-ratelimit-input-tokens-limit", "30000")
			h.Set("anthropic-ratelimit-input-tokens-remaining", "0")
			h.Set("anthropic-ratelimit-input-tokens-reset", now.Add(2*time.Hour).UTC().Format(time.RFC3339))
			h.Set("Content-Type", "application/json")
			w.WriteHeader(429)
			w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`))
		})
		_, err := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
		pe, _ := AsError(err)
		if pe == nil || pe.Kind != KindRateLimited || pe.Action != ActionRetry {
			t.Fatalf("stream=%v: got %v, want a retried rate_limited", stream, err)
		}
		// The exhausted budget's reset, two hours off (less the moments
		// the call took), not the requests budget's second, nor no wait.
		if pe.RetryAfter <= time.Hour || pe.RetryAfter > 2*time.Hour {
			t.Errorf("stream=%v: RetryAfter %v, want about 2h, the input-tokens budget's reset (its remaining is 0)", stream, pe.RetryAfter)
		}
	}
}

func TestAnthropicRateLimitResetRead(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		name   string
		status int
		h      map[string]string
		want   time.Duration
	}{
		{"the exhausted budget's reset", 429, map[string]string{
			"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": at(40 * time.Second),
			"anthropic-ratelimit-requests-remaining": "12", "anthropic-ratelimit-requests-reset": at(5 * time.Second)}, 40 * time.Second},
		{"the latest of two exhausted", 429, map[string]string{
			"anthropic-ratelimit-input-tokens-remaining": "0", "anthropic-ratelimit-input-tokens-reset": at(10 * time.Second),
			"anthropic-ratelimit-output-tokens-remaining": "0", "anthropic-ratelimit-output-tokens-reset": at(50 * time.Second)}, 50 * time.Second},
		{"none exhausted: the earliest", 429, map[string]string{
			"anthropic-ratelimit-tokens-remaining": "300", "anthropic-ratelimit-tokens-reset": at(40 * time.Second),
			"anthropic-ratelimit-requests-remaining": "12", "anthropic-ratelimit-requests-reset": at(5 * time.Second)}, 5 * time.Second},
		{"no remaining headers: the earliest", 429, map[string]string{
			"anthropic-ratelimit-tokens-reset": at(40 * time.Second), "anthropic-ratelimit-requests-reset": at(7 * time.Second)}, 7 * time.Second},
		{"a reset past is no wait", 429, map[string]string{
			"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": at(-time.Minute)}, 0},
		{"fractional seconds and an offset", 429, map[string]string{
			"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": now.Add(1500 * time.Millisecond).In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)}, 1500 * time.Millisecond},
		{"not RFC 3339 is ignored", 429, map[string]string{
			"anthropic-ratelimit-unified-reset": "1893499200", "anthropic-ratelimit-tokens-reset": "in a minute"}, 0},
		{"retry-after wins", 429, map[string]string{"Retry-After": "3",
			"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": at(40 * time.Second)}, 3 * time.Second},
		{"another status does not read them", 529, map[string]string{
			"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": at(40 * time.Second)}, 0},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := ParseRetryAfter(tc.status, h, now); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
