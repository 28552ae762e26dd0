package api

import (
	"encoding/json"
	"testing"
)

// docs/chat.md and docs/api.md: Retry-After of a 503 no-eligible-provider is
// the seconds until the route's first open breaker probes again, and 1 s for
// a half-open breaker whose probes are taken (a probe ends within moments).
// With one target half-open (its probe in flight) and another open for 50 s
// more, the first that may admit is the half-open one: the caller should be
// told 1 s, as the race itself waits (breakerWait: min over the targets,
// breakerWaitHalfOpen for a half-open one). The half-open refusal is dropped
// as soon as any open breaker gives a time: Retry-After says 50, and an
// OpenAI SDK waits 50 s before resending a request the half-open target
// would have taken a second later.
func TestRetryAfterHalfOpenBeatsALaterOpenBreaker(t *testing.T) {
	routing, err := json.Marshal([]map[string]any{
		{"provider": "a", "eligible": false, "reason": "circuit breaker open after 5 consecutive failures; probing again in 50s"},
		{"provider": "b", "eligible": false, "reason": "circuit breaker half-open: its one probe is in flight"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := noEligibleRetryAfter(routing, 0); got != noEligibleRetryHalfOpen {
		t.Fatalf("Retry-After %d s; want %d s: the half-open target may admit within a second, long before the open one probes in 50 s", got, noEligibleRetryHalfOpen)
	}
}
