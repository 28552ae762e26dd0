package api

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// SPEC §17 / docs/operations.md (Per-owner limits): requests_per_second is a
// token bucket per owner; past it, 429. However many requests an owner sends
// at once, no more than burst + rate × elapsed may be let through.
//
// allow reads the clock (time.Now) before x/time/rate's Limiter takes its
// mutex. Under contention a request that read the clock earlier takes the
// mutex after one that read it later, and Limiter.reserveN stores that earlier
// time as lim.last (it keeps t even when t < last: golang/go#65508, #71360):
// the next request is credited again for the time between the two, and the
// bucket refills faster than its rate. A bucket that is never handed a time
// earlier than its last (the clock read under a per-owner lock, or clamped)
// never lets more through than the bound below, in any round. Found by
// review (rauth14).
func TestRateLimitHoldsUnderContention(t *testing.T) {
	const rps, burst, workers, rounds = 1000, 1000, 2000, 5
	for round := range rounds {
		l := newLimiter(Limits{RequestsPerSecond: rps, Burst: burst}, nil, 0, nil)
		var allowed atomic.Int64
		start := time.Now()
		end := start.Add(500 * time.Millisecond)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for time.Now().Before(end) {
					if ok, _, _ := l.allow("acme"); ok {
						allowed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		bound := float64(burst) + rps*elapsed.Seconds()
		got := float64(allowed.Load())
		t.Logf("round %d: %.0f allowed in %s, bound %.0f", round, got, elapsed.Round(time.Millisecond), bound)
		if got > bound*1.1 {
			t.Fatalf("owner limited to %d requests per second (burst %d) got %.0f requests through in %s from %d concurrent callers; at most %.0f may pass (%.0f%% over its limit)",
				rps, burst, got, elapsed.Round(time.Millisecond), workers, bound, 100*(got-bound)/bound)
		}
	}
}
