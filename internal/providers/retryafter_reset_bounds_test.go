package providers

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A plain x-ratelimit-reset-* number was read as seconds whatever its size:
// a Unix time (1796000000, in 2026) was a wait of some 57 years, beyond any
// max_retry_after, so the 429 failed over instead of being retried, with a
// huge retry_after_ms stored. A number above a day is ignored, as the
// comment said it was. Found by review.
func TestRateLimitResetUnixTimeIgnored(t *testing.T) {
	for _, v := range []string{"1796000000", "1796000000000", "86401"} {
		h := http.Header{}
		h.Set("x-ratelimit-remaining-requests", "0")
		h.Set("x-ratelimit-reset-requests", v)
		if d := ParseRetryAfter(http.StatusTooManyRequests, h, time.Now()); d != 0 {
			t.Errorf("reset %s read as a wait of %v; a number above a day (a Unix time) is ignored", v, d)
		}
	}
	h := http.Header{}
	h.Set("x-ratelimit-remaining-requests", "0")
	h.Set("x-ratelimit-reset-requests", "86400")
	if d := ParseRetryAfter(http.StatusTooManyRequests, h, time.Now()); d != 24*time.Hour {
		t.Errorf("reset 86400 read as %v, want a day", d)
	}
}

// The x-ratelimit-* headers come with every response of such a provider, an
// error of any status too: only a 429 says a budget refused the request, so
// only a 429 waits for its reset. A 503 whose headers happen to show an
// exhausted budget is retried after the usual backoff (no RetryAfter); a
// Retry-After is still read whatever the status. Found by review.
func TestRateLimitResetOnlyFor429(t *testing.T) {
	hdr := map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s"}
	for status, want := range map[int]time.Duration{503: 0, 500: 0, 429: 6 * time.Minute} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, status, hdr, apiErrorBody("try later", "server_error", nil, nil))
		})
		_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		if e := mustError(t, err); e.RetryAfter != want {
			t.Errorf("HTTP %d: RetryAfter %v, want %v", status, e.RetryAfter, want)
		}
	}
	h := http.Header{}
	h.Set("Retry-After", "3")
	if d := ParseRetryAfter(http.StatusServiceUnavailable, h, time.Now()); d != 3*time.Second {
		t.Errorf("a 503's Retry-After read as %v, want 3s", d)
	}
}
