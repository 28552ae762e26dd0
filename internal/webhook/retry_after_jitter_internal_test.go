package webhook

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// SPEC §16 and docs/api.md: redelivery "with capped exponential backoff and
// jitter". A try answered 429/503 with Retry-After was retried exactly at
// now + Retry-After (Backoff.NextRetry took the receiver's wait in place of
// the jittered backoff, and added nothing to it): the owner's tries in flight
// when an overloaded endpoint answered "Retry-After: 600" all came back to it
// in the same instant, max_inflight_per_owner of them per replica, just as it
// recovered, while the held deliveries of the owner's pause were spread (up
// to an eighth of the wait, at most 30 s: ownerPauses.held) (found by
// review). Now they get the same spread.
func TestRetryAfterRetriesAreJittered(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := NewWorker(nil, Config{})
	w.setBackoff(Backoff{Base: 5 * time.Second, Cap: time.Hour, Now: func() time.Time { return now }})
	const n = 25 // the default webhooks.max_inflight_per_owner
	first, last := time.Time{}, time.Time{}
	for i := range n {
		id := int64(i + 1)
		w.hints.setRetryAfter(id, 10*time.Minute) // each try answered 503, Retry-After: 600
		due := w.backoff.NextRetry(&rivertype.JobRow{ID: id, Attempt: 1})
		if wait := due.Sub(now); wait < 10*time.Minute || wait > 10*time.Minute+min(10*time.Minute/8, ownerBusyMax) {
			t.Fatalf("a try answered Retry-After: 600 is retried after %s, want 10m plus at most an eighth of it, at most %s", wait, ownerBusyMax)
		}
		if first.IsZero() || due.Before(first) {
			first = due
		}
		if due.After(last) {
			last = due
		}
	}
	if spread := last.Sub(first); spread < time.Second {
		t.Errorf("%d tries answered 503 with Retry-After: 600 are all retried within %s of each other (at %s): "+
			"a Retry-After wait gets no jitter, so they arrive together as the endpoint recovers", n, spread, first.Sub(now))
	}
}
