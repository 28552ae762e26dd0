package webhook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// webhooks.max_response_bytes may be set as low as 1 (config/ranges.go). A
// non-2xx answer's excerpt is then read through that limit, so it can hold
// answerExcerptBytes bytes or fewer although the answer went on: answerText
// takes a cut only from a head longer than answerExcerptBytes, and hides a
// secret path segment the limit cut in two only then. With
// max_response_bytes at 256 (the excerpt's own size: "read only what is
// kept") or below, a receiver's error page that quotes the webhook URL's path
// (Express: "Cannot POST /services/T…/B…/<token>") and is cut by the limit
// partway into the token leaves the token's start in the try's error — stored,
// shown by GET /v1/jobs/{id}/events, logged at info and handed to River —
// though docs/api.md says what the text quotes of those parts is shown as "…"
// and answertext.go that "a part the excerpt's limit cut in two is hidden as
// well".
func TestSmallMaxResponseBytesHidesTheWebhookPathItCuts(t *testing.T) {
	const path = "/services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE"
	quote := "Cannot POST " + path + " and more"
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, body.Load().(string))
	}))
	t.Cleanup(srv.Close)
	for _, limit := range []int{256, 128} {
		w := NewWorker(nil, Config{Timeout: 5 * time.Second, MaxResponseBytes: int64(limit)})
		// Every padding that puts the limit inside the secret part of the path.
		for pad := max(0, limit-len(quote)); pad <= limit-len("Cannot POST /services/T")-1; pad++ {
			body.Store(strings.Repeat("x", pad) + " " + quote)
			_, err := w.send(context.Background(), newTryClock(time.Time{}, time.Now), srv.URL+path,
				signingKeys{owner: "acme", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "01a25039-0000-7000-8000-000000000001", "k", []byte("{}"))
			if err == nil {
				t.Fatal("a 404 was taken for a delivery")
			}
			if msg := err.Error(); strings.Contains(msg, "T024") || strings.Contains(msg, "B07R") || strings.Contains(msg, "m2zX") {
				t.Errorf("max_response_bytes %d, padded %d: the try's error shows part of the webhook URL's secret path: %q", limit, pad, msg)
			}
		}
	}
}
