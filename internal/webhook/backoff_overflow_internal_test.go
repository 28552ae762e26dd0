package webhook

import (
	"math"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// A cap of centuries: Delay doubled its wait while it was below the cap, so
// past ~146 years it overflowed to a negative wait and rand.N panicked in
// River's retry policy (outside the worker's panic recovery) at the 32nd
// failed try, stopping the router. Every wait now stays in (0, cap].
func TestBackoffDelayNeverOverflows(t *testing.T) {
	for _, cap := range []time.Duration{2_000_000 * time.Hour, 200 * 365 * 24 * time.Hour, math.MaxInt64, time.Hour} {
		b := Backoff{Base: 5 * time.Second, Cap: cap}
		for attempt := 1; attempt <= 100; attempt++ {
			d := b.Delay(attempt)
			if d <= 0 || d > cap {
				t.Fatalf("cap %s, attempt %d: wait %s, want in (0, %s]", cap, attempt, d, cap)
			}
			if attempt >= 32 && cap != time.Hour {
				_ = b.NextRetry(&rivertype.JobRow{Attempt: attempt})
			}
		}
	}
}
