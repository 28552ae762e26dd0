package api

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// A 503 no-eligible-provider's Retry-After is when the first of the route's
// refused targets may admit (docs/api.md: "whichever of the route's refusing
// breakers may admit first"; the half-open case is min'd the same way). A
// target the conformance gate refused only because it could not read its
// results (race.GateUnread: a lock on conformance_runs, a slow database)
// clears within a second or two (noEligibleRetryUnread, 2 s). With such a
// target beside another whose breaker is open for 50 s more, the caller
// should be told 2 s; the unread refusal is dropped as soon as any open
// breaker gives a time, so Retry-After says 50 and an SDK waits 50 s before
// resending a request the first target would have taken 2 s later.
// Found by review (rconf14).
func TestRetryAfterGateUnreadBeatsALaterOpenBreaker(t *testing.T) {
	routing, err := json.Marshal([]map[string]any{
		{"provider": "primary", "eligible": false, "cause": "breaker",
			"reason": "circuit breaker open after 5 consecutive failures; probing again in 50s"},
		{"provider": "fallback", "eligible": false, "cause": "conformance_gate",
			"reason": race.GateUnread + " for triage@3 (read conformance standing of fallback on triage@3: timeout: context deadline exceeded)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := noEligibleRetryAfter(routing, 0); got != noEligibleRetryUnread {
		t.Fatalf("Retry-After %d s; want %d s: the fallback refused only because the gate could not read its results may be admitted within seconds, long before the primary's breaker probes in 50 s", got, noEligibleRetryUnread)
	}
}
