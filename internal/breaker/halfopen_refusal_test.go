package breaker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
)

// With half_open_probes: 3, two probes succeeded and one is in flight: a job
// refused is told so, not that "its 3 probe(s) are in flight" (which counted
// the finished probes). Found by review.
func TestHalfOpenRefusalCountsProbesInFlight(t *testing.T) {
	set, changes := newSet(breaker.Settings{ConsecutiveFailures: 1, OpenFor: 20 * time.Millisecond, HalfOpenProbes: 3})
	defer set.Close()
	admit(t, set)(race.OutcomeFailure)
	waitChange(t, changes, "p", breaker.StateOpen)
	waitChange(t, changes, "p", breaker.StateHalfOpen)
	admit(t, set)(race.OutcomeSuccess)
	admit(t, set)(race.OutcomeSuccess)
	inFlight := admit(t, set)
	defer inFlight(race.OutcomeIgnore)
	_, ok, why := set.Admit("p")
	if ok {
		t.Fatal("a fourth attempt was admitted while half-open with 3 probes")
	}
	const want = "circuit breaker half-open: all 3 of its probes are taken (2 succeeded, 1 in flight)"
	if why != want {
		t.Fatalf("refused with %q, want %q", why, want)
	}
	if ok, why := set.State("p"); ok || why != want {
		t.Fatalf("State says ok=%v %q, want refused with %q", ok, why, want)
	}
}

// With one probe, the refusal names it.
func TestHalfOpenRefusalOneProbe(t *testing.T) {
	set, changes := newSet(breaker.Settings{ConsecutiveFailures: 1, OpenFor: 20 * time.Millisecond, HalfOpenProbes: 1})
	defer set.Close()
	admit(t, set)(race.OutcomeFailure)
	waitChange(t, changes, "p", breaker.StateOpen)
	waitChange(t, changes, "p", breaker.StateHalfOpen)
	probe := admit(t, set)
	defer probe(race.OutcomeIgnore)
	_, ok, why := set.Admit("p")
	if ok || !strings.Contains(why, "its one probe is in flight") {
		t.Fatalf("refused=%v with %q, want the one probe in flight named", !ok, why)
	}
}
