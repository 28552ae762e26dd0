package conformance

import (
	"context"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// retryDelay is the wait before retry attempt+1 (attempt counts from 0): the
// backoff's ceiling (Base doubled attempt times, capped at Cap, never
// wrapping however many retries providers[].max_retries allows), never
// shorter than the provider's retryAfter. Unlike the race it has no jitter:
// a conformance run makes one call at a time per target.
func retryDelay(b race.Backoff, attempt int, retryAfter time.Duration) time.Duration {
	return max(b.Ceiling(attempt+1), retryAfter)
}

// call makes one round trip, with the target's retries for transient errors
// (retryDelay; a Retry-After longer than retry.MaxRetryAfter is not waited
// for: the call fails).
func call(ctx context.Context, name string, t *race.Target, retry race.Backoff, req *providers.Request) (*providers.Response, *providers.Error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		var resp *providers.Response
		var err error
		if s, ok := t.Provider.(providers.Streamer); ok && t.Stream {
			resp, err = s.CompleteStream(cctx, req, nil)
		} else {
			resp, err = t.Provider.Complete(cctx, req)
		}
		cancel()
		if err == nil {
			return resp, nil
		}
		pe := providers.Classify(name, err)
		if pe.Action != providers.ActionRetry || attempt >= t.MaxRetries || pe.RetryAfter > retry.MaxRetryAfter {
			return nil, pe
		}
		timer := time.NewTimer(retryDelay(retry, attempt, pe.RetryAfter))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, providers.Classify(name, ctx.Err())
		case <-timer.C:
		}
	}
}
