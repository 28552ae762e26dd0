package race

import "testing"

// A target refused by both its circuit breaker and the conformance gate is
// the gate's (it does not clear by itself), unless the gate could not read
// its results: then the breaker, which says when to ask again, keeps it.
// Found by review (rbreak13 F3).
func TestGateOverBreaker(t *testing.T) {
	breakerOpen := &Decision{Provider: "p", Cause: CauseBreaker, Reason: "circuit breaker open after 5 consecutive failures; probing again in 5s"}
	admitted := &Decision{Provider: "p", Eligible: true}
	for _, c := range []struct {
		name string
		d    *Decision
		why  string
		want bool
	}{
		{"breaker open, no passing run", breakerOpen, "no passing conformance run for triage@3 with model m1", true},
		{"breaker open, results unread", breakerOpen, GateUnread + ": timeout", false},
		{"breaker admits, no passing run", admitted, "no passing conformance run for triage@3 with model m1", true},
		{"breaker admits, results unread", admitted, GateUnread + ": timeout", true},
	} {
		if got := gateOverBreaker(c.d, c.why); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
