package breaker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
)

// A refusal says how long until the breaker probes again, rounded up: a
// breaker still open has time left. Rounded to the nearest second, under
// half a second left read "probing again in 0s" — as if it were probing
// already — in the routing a job recorded (found while reviewing a job
// re-planned after a breaker wait).
func TestBreakerRefusalTimeLeftIsRoundedUp(t *testing.T) {
	const openFor = 30 * time.Second
	clock := newTestClock()
	set, changes := newSetClock(breaker.Settings{ConsecutiveFailures: 1, OpenFor: openFor, HalfOpenProbes: 1}, clock)
	defer set.Close()
	admit(t, set)(race.OutcomeFailure)
	waitChange(t, changes, "p", breaker.StateOpen)
	for _, c := range []struct {
		advance time.Duration
		want    string
	}{{0, "probing again in 30s"}, {29*time.Second + 400*time.Millisecond, "probing again in 1s"}, {599 * time.Millisecond, "probing again in 1s"}} {
		clock.Advance(c.advance)
		_, ok, why := set.Admit("p")
		if ok || !strings.HasSuffix(why, c.want) {
			t.Fatalf("after %v more: ok=%v why=%q; want a refusal ending %q", c.advance, ok, why, c.want)
		}
	}
}
