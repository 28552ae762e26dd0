package conformance

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// The wait between retries doubles up to the cap and stays there: from
// attempt 35 a shift of 500ms overflowed to a negative, then zero, delay, so a
// large providers[].max_retries retried an overloaded provider with no pause.
func TestRetryDelayStopsDoublingAtTheCap(t *testing.T) {
	for _, b := range []race.Backoff{
		race.Backoff{}.WithDefaults(),
		race.Backoff{Base: 500 * time.Millisecond, Cap: 10 * time.Second}.WithDefaults(),
		race.Backoff{Base: time.Nanosecond, Cap: time.Duration(math.MaxInt64)}.WithDefaults(),
		race.Backoff{Base: time.Duration(math.MaxInt64 / 3), Cap: time.Duration(math.MaxInt64)}.WithDefaults(),
		race.Backoff{Base: time.Hour, Cap: time.Second}.WithDefaults(), // base above cap: the cap
	} {
		prev := time.Duration(0)
		for attempt := 0; attempt <= 100; attempt++ {
			d := retryDelay(b, attempt, 0)
			if d <= 0 || d > b.Cap || d < prev {
				t.Fatalf("%+v: attempt %d waits %s (previous %s): want positive, at most the cap, never less than before", b, attempt, d, prev)
			}
			prev = d
		}
		if prev != b.Cap {
			t.Fatalf("%+v: attempt 100 waits %s, want the cap %s", b, prev, b.Cap)
		}
	}
	b := race.Backoff{}.WithDefaults()
	if d := retryDelay(b, 0, 0); d != 200*time.Millisecond {
		t.Fatalf("first retry waits %s, want execution.retry.base's default 200ms", d)
	}
	if d := retryDelay(b, 60, 20*time.Second); d != 20*time.Second {
		t.Fatalf("a Retry-After of 20s waits %s, want 20s", d)
	}
}

type retryAfterProvider struct {
	calls int
	after time.Duration
}

func (p *retryAfterProvider) Name() string { return "busy" }

func (p *retryAfterProvider) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	p.calls++
	e := providers.ClassifyStatus("busy", 429, "", "slow down")
	e.RetryAfter = p.after
	return nil, e
}

// A Retry-After longer than the configured execution.retry.max_retry_after
// fails the call instead of waiting, as it fails over in the race.
func TestCallDoesNotWaitPastMaxRetryAfter(t *testing.T) {
	p := &retryAfterProvider{after: 2 * time.Second}
	target := &race.Target{Provider: p, MaxRetries: 1}
	_, pe := call(context.Background(), "busy", target, race.Backoff{MaxRetryAfter: time.Second}.WithDefaults(), &providers.Request{})
	if pe == nil || pe.Action != providers.ActionRetry {
		t.Fatalf("got %v, want the provider's retryable error", pe)
	}
	if p.calls != 1 {
		t.Fatalf("%d calls: a Retry-After of 2s above max_retry_after 1s was waited for", p.calls)
	}
	var e *providers.Error
	if !errors.As(pe, &e) || e.RetryAfter != 2*time.Second {
		t.Fatalf("got %v", pe)
	}
}
