package race

import (
	"testing"
	"time"
)

// Which cuts by the job's deadline excuse the attempt's target (its breaker
// does not count them): a late hedge or failover, which had less than its
// first-byte budget, and any attempt whose provider had begun answering. The
// job's opening attempt, which had the job's whole deadline, and an attempt
// that had its whole first-byte budget are not excused: a target that never
// answers is a failure whatever the route's deadline. Found by review.
func TestExcusedByDeadline(t *testing.T) {
	fb := &Target{Timeout: time.Minute, FirstByteTimeout: 30 * time.Second}
	cases := []struct {
		name     string
		received bool
		waited   time.Duration
		t        *Target
		opening  bool
		want     bool
	}{
		{"late hedge, no byte", false, 5 * time.Second, fb, false, true},
		{"opening attempt, no byte within a 20s deadline", false, 20 * time.Second, fb, true, false},
		{"opening attempt, answering when cut", true, 20 * time.Second, fb, true, true},
		{"late hedge, answering when cut", true, time.Second, fb, false, true},
		{"failover that had its whole first-byte budget", false, 30 * time.Second, fb, false, false},
		{"failover, timeout only, short of it", false, 59 * time.Second, &Target{Timeout: time.Minute}, false, true},
		{"failover, no budget at all", false, time.Hour, &Target{}, false, true},
	}
	for _, c := range cases {
		if got := excusedByDeadline(c.received, c.waited, c.t, c.opening); got != c.want {
			t.Errorf("%s: excused %v, want %v", c.name, got, c.want)
		}
	}
}

// A target's first-byte budget is the shorter of first_byte_timeout and
// timeout, either alone when the other is unset.
func TestFirstByteBudget(t *testing.T) {
	for _, c := range []struct {
		t    *Target
		want time.Duration
	}{
		{&Target{Timeout: time.Minute, FirstByteTimeout: 30 * time.Second}, 30 * time.Second},
		{&Target{Timeout: 10 * time.Second, FirstByteTimeout: 30 * time.Second}, 10 * time.Second},
		{&Target{FirstByteTimeout: 30 * time.Second}, 30 * time.Second},
		{&Target{Timeout: time.Minute}, time.Minute},
		{&Target{}, 0},
		{nil, 0},
	} {
		if got := c.t.firstByteBudget(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.t, got, c.want)
		}
	}
}
