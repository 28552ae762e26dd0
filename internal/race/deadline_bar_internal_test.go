package race

import (
	"testing"
	"time"
)

// The bar a no-byte cut by the job's deadline must reach to count against the
// attempt's target: its first-byte budget when the route's deadline leaves
// room for it (or sets none); on a route whose deadline is shorter than the
// budget — where no failover or hedge can ever have the budget — what the
// target is expected to answer within, at least retryFloor, at most the
// budget. Found by review (rbreak13 F2).
func TestDeadlineBarOf(t *testing.T) {
	for _, c := range []struct {
		name                     string
		budget, deadline, expect time.Duration
		want                     time.Duration
	}{
		{"no deadline", 30 * time.Second, 0, 0, 30 * time.Second},
		{"deadline longer than the budget", 30 * time.Second, time.Minute, 0, 30 * time.Second},
		{"deadline equal to the budget", 30 * time.Second, 30 * time.Second, 0, 30 * time.Second},
		{"no budget", 0, 20 * time.Second, 0, 0},
		{"short deadline, nothing learned, no hedging", 30 * time.Second, 20 * time.Second, 0, retryFloor},
		{"short deadline, a hedge delay under the floor", 30 * time.Second, 20 * time.Second, 500 * time.Millisecond, retryFloor},
		{"short deadline, answers in 3s (twice its p95: 6s)", 30 * time.Second, 20 * time.Second, 6 * time.Second, 6 * time.Second},
		{"short deadline, expected past its budget", 30 * time.Second, 20 * time.Second, time.Minute, 30 * time.Second},
		{"short deadline, budget under the floor", 500 * time.Millisecond, 400 * time.Millisecond, 0, 500 * time.Millisecond},
	} {
		if got := deadlineBarOf(c.budget, c.deadline, c.expect); got != c.want {
			t.Errorf("%s: bar %s, want %s", c.name, got, c.want)
		}
	}
	// A fallback on a 1.5s route (budget 1m), failed over to after a fast
	// failure and cut with no byte after ~1.4s, counts; a healthy one
	// failed over to late (cut after 0.5s) is excused.
	bar := deadlineBarOf(time.Minute, 1500*time.Millisecond, 0)
	if excusedByDeadline(false, 1400*time.Millisecond, bar, false) {
		t.Error("a failover silent 1.4s of a 1.5s deadline (budget 1m, nothing learned) was excused")
	}
	if !excusedByDeadline(false, 500*time.Millisecond, bar, false) {
		t.Error("a failover sent 0.5s before the deadline and cut silent was counted")
	}
}
