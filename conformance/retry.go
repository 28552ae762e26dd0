package conformance

import (
	"context"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// retryDefaults fills the zero fields of b with execution.retry's defaults,
// as the race runner does.
func retryDefaults(b race.Backoff) race.Backoff {
	if b.Base <= 0 {
		b.Base = 200 * time.Millisecond
	}
	if b.Cap <= 0 {
		b.Cap = 5 * time.Second
	}
	if b.MaxRetryAfter <= 0 {
		b.MaxRetryAfter = 30 * time.Second
	}
	return b
}

// retryDelay is the wait before retry attempt+1 (attempt counts from 0): b.Base
// doubled attempt times, capped at b.Cap, never shorter than the provider's
// retryAfter. It stops doubling at the cap, so no number of retries
// (providers[].max_retries) overflows it to no wait at all. b has its
// defaults (retryDefaults). Unlike the race it has no jitter: a conformance
// run makes one call at a time per target.
func retryDelay(b race.Backoff, attempt int, retryAfter time.Duration) time.Duration {
	d := min(b.Base, b.Cap)
	for range attempt {
		if d > b.Cap-d { // 2d > Cap, without overflowing
			d = b.Cap
			break
		}
		d *= 2
	}
	return max(d, retryAfter)
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
