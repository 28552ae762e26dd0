package breaker

import (
	"math"
	"testing"
	"time"
)

// The wake-up after open_for saturates: open_for within a millisecond of the
// largest Duration (`open_for: 2562047h47m16s` is a valid setting) wrapped
// negative, and the timer re-armed every 5ms while the breaker stayed open.
func TestProbeAfterSaturates(t *testing.T) {
	for _, openFor := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Microsecond} {
		if d := probeAfter(openFor); d < openFor {
			t.Errorf("open_for %d: wakes after %d", openFor, d)
		}
	}
	if d := probeAfter(30 * time.Second); d != 30*time.Second+time.Millisecond {
		t.Errorf("30s: %s", d)
	}
}
