package api

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Refused requests take nothing from the owner's rate: a flood of them, all
// at once, does not push the owner's next request further away (x/time/rate's
// CancelAt gives back a refused token only when no later reservation was
// made, so taking one and handing it back drove the bucket far below zero).
func TestRateRefusalsTakeNoTokens(t *testing.T) {
	l := newLimiter(Limits{RequestsPerSecond: 0.01, Burst: 1}, nil, 0, nil)
	if ok, _, _ := l.allow("acme"); !ok {
		t.Fatal("the first request, within the burst, was refused")
	}
	ok, before, _ := l.allow("acme")
	if ok || before <= 0 {
		t.Fatalf("the second request: allowed %v, retry after %v; want refused with a wait", ok, before)
	}
	// The workers refuse in lockstep, each round starting together on
	// every processor, so that refusals overlap.
	workers := 2 * max(2, runtime.GOMAXPROCS(0))
	const rounds = 10000
	var arrived, allowed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for round := range int64(rounds) {
				arrived.Add(1)
				for arrived.Load() < (round+1)*int64(workers) {
					runtime.Gosched()
				}
				if ok, wait, _ := l.allow("acme"); ok || wait <= 0 {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n > 0 {
		t.Fatalf("%d requests of the flood were allowed or refused without a wait", n)
	}
	ok, after, _ := l.allow("acme")
	if ok {
		t.Fatal("the request after the flood was allowed")
	}
	// Time only shortens the wait; a second covers Retry-After's rounding.
	if after > before+time.Second {
		t.Fatalf("%d refused requests moved the owner's next request from %v to %v away (tokens %.1f)",
			workers*rounds, before, after, l.of("acme").rate.Tokens())
	}
}

// A rate so small that its next token is centuries away refuses with that
// wait, not with a duration that overflowed.
func TestRateRefusalOfATinyRate(t *testing.T) {
	l := newLimiter(Limits{RequestsPerSecond: 1e-300, Burst: 1}, nil, 0, nil)
	if ok, _, _ := l.allow("acme"); !ok {
		t.Fatal("the first request, within the burst, was refused")
	}
	if ok, wait, _ := l.allow("acme"); ok || wait < 100*365*24*time.Hour {
		t.Fatalf("the second request: allowed %v, retry after %v; want refused for a century or more", ok, wait)
	}
}

// A job whose creation committed before a read of the live count that ran
// while it was being created is not counted twice (by the read, and again as
// this replica's admission): the owner is not refused below its limit until
// the next read. Without such a read, an admission counts as before.
func TestLiveCountReadDuringCreationCountsTheJobOnce(t *testing.T) {
	ctx := context.Background()
	count := newStoreCount(t)
	l := newLimiter(Limits{MaxLiveJobs: 2}, nil, time.Hour, count)
	refreshPasses := func() {
		o := l.of("acme")
		o.mu.Lock()
		o.readAt = o.readAt.Add(-time.Hour)
		o.mu.Unlock()
	}
	admit := func(what string) func(bool) {
		t.Helper()
		done, ok, _, err := l.admitLive(ctx, "acme")
		if err != nil || !ok {
			t.Fatalf("%s: admitted %v, %v (reads %d)", what, ok, err, count.reads.Load())
		}
		return done
	}

	first := admit("the first job")     // reads 0 live jobs
	count.commitJob(t, "acme", "first") // its creation commits
	refreshPasses()
	// The read sees the committed job while its creation is still in flight
	// and never ends here: the admission waits for it (at most
	// maxOverlapWait), then is refused on the count as it stands
	// (counted by the read and as in flight). The creation that does end is
	// TestLiveCountCommittedButNotDoneDoesNotRefuseBelowLimit.
	if _, ok, _, err := l.admitLive(ctx, "acme"); ok || err != nil || count.reads.Load() != 2 {
		t.Fatalf("admission during the first creation: admitted %v, %v, reads %d; want refused after a second read", ok, err, count.reads.Load())
	}
	first(true)
	second := admit("the second job, with one live job of two allowed")
	count.commitJob(t, "acme", "second")
	second(true)
	reads := count.reads.Load()
	if _, ok, _, err := l.admitLive(ctx, "acme"); ok || err != nil {
		t.Fatalf("a third job, with two live jobs of two allowed: admitted %v, %v", ok, err)
	}
	if n := count.reads.Load(); n != reads {
		t.Fatalf("an admission with no read since counted by a new read (%d reads, want %d): the refresh interval is not kept", n, reads)
	}
}

// Creations that overlap a read of the count must not make every admission
// read it: clearing readAt when such a creation ended made the next admission
// read, which overlapped the creations still in flight, which cleared it in
// turn — an owner with two creations in flight read the count (a database
// round trip under the owner's lock) on every request, whatever the refresh
// interval. Found by review of the fix above.
func TestLiveCountReadsKeepTheRefreshInterval(t *testing.T) {
	ctx := context.Background()
	count := newStoreCount(t)
	l := newLimiter(Limits{MaxLiveJobs: 1000}, nil, time.Hour, count)
	admit := func() func(bool) {
		t.Helper()
		done, ok, _, err := l.admitLive(ctx, "acme")
		if err != nil || !ok {
			t.Fatalf("refused: %v %v", ok, err)
		}
		return done
	}
	prev := admit()
	o := l.of("acme")
	o.mu.Lock()
	o.readAt = o.readAt.Add(-2 * time.Hour) // the refresh interval passes once
	o.mu.Unlock()
	for range 100 {
		next := admit() // overlaps prev's creation
		prev(true)
		prev = next
	}
	prev(true)
	if n := count.reads.Load(); n > 3 {
		t.Fatalf("refresh is 1h, yet 101 admissions read the live count %d times", n)
	}
}
