package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
)

// Counts past uint32 saturate instead of wrapping: 2^32 consecutive failures
// wrapped to 0 would trip the breaker on the first failure, and 2^32
// half-open probes wrapped to 0 would refuse every probe.
func TestSettingsPastUint32Saturate(t *testing.T) {
	var h64 int64 = math.MaxUint32 + 1
	huge := int(h64)
	if int64(huge) != h64 {
		t.Skip("int is 32 bits: such a setting cannot be written")
	}
	set, _ := newSet(breaker.Settings{ConsecutiveFailures: huge, OpenFor: time.Hour})
	defer set.Close()
	for range 3 {
		admit(t, set)(race.OutcomeFailure)
	}
	if ok, why := set.State("p"); !ok {
		t.Fatalf("consecutive_failures 2^32 opened after 3 failures: %s", why)
	}

	set, changes := newSet(breaker.Settings{ConsecutiveFailures: 1, OpenFor: 20 * time.Millisecond, HalfOpenProbes: huge})
	defer set.Close()
	admit(t, set)(race.OutcomeFailure)
	waitChange(t, changes, "p", breaker.StateOpen)
	waitChange(t, changes, "p", breaker.StateHalfOpen)
	if ok, why := set.State("p"); !ok {
		t.Fatalf("half_open_probes 2^32, half-open with no probe in flight, is not eligible: %s", why)
	}
}
