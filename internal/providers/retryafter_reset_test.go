package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// OpenAI and Azure answer a 429 for an exhausted daily budget without
// Retry-After but with x-ratelimit-remaining-requests: 0 and
// x-ratelimit-reset-requests (a Go duration). Ignored, the 429 was retried
// after a short backoff and refused again; read, a reset beyond
// max_retry_after fails over at once.
func TestRateLimitResetHeadersGiveRetryAfter(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, 429, map[string]string{
			"x-ratelimit-limit-requests": "10000", "x-ratelimit-remaining-requests": "0",
			"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-remaining-tokens": "29000",
			"x-ratelimit-reset-tokens": "120ms",
		}, apiErrorBody("Rate limit reached for gpt-4o in organization org-abc on requests per day (RPD): Limit 10000, Used 10000, Requested 1. Please try again in 6m0s.", "requests", nil, "rate_limit_exceeded"))
	})
	p := newTestAdapter(t, srv.URL, nil)
	_, err := p.Complete(context.Background(), testRequest())
	e := mustError(t, err)
	if e.Kind != KindRateLimited {
		t.Fatalf("kind %s", e.Kind)
	}
	if e.RetryAfter != 6*time.Minute {
		t.Fatalf("RetryAfter %v, want 6m0s: the exhausted budget's x-ratelimit-reset-requests", e.RetryAfter)
	}
}

func TestParseRetryAfterRateLimitReset(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		h    map[string]string
		want time.Duration
	}{
		{"requests exhausted", map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s"}, 6 * time.Minute},
		{"tokens exhausted, ms", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "20ms"}, 20 * time.Millisecond},
		{"plain seconds", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "2.5"}, 2500 * time.Millisecond},
		{"largest of both exhausted", map[string]string{
			"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s",
			"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1m30.5s"}, 90*time.Second + 500*time.Millisecond},
		{"not exhausted is ignored", map[string]string{"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "6m0s"}, 0},
		{"no remaining header is ignored", map[string]string{"x-ratelimit-reset-requests": "6m0s"}, 0},
		{"unreadable reset is ignored", map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "tomorrow"}, 0},
		{"negative reset is ignored", map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "-5s"}, 0},
		{"Retry-After wins", map[string]string{"Retry-After": "2", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s"}, 2 * time.Second},
		{"retry-after-ms wins", map[string]string{"retry-after-ms": "150", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s"}, 150 * time.Millisecond},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := ParseRetryAfter(http.StatusTooManyRequests, h, now); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
