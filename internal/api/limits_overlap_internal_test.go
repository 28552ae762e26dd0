package api

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// overlapRig is a limiter of max_live_jobs 2 with a clock the test moves.
type overlapRig struct {
	l     *limiter
	count *storeCount
	mu    sync.Mutex
	clock time.Time
}

// newOverlapRig's count is read from a test database; each read reports
// what it saw on count.seen.
func newOverlapRig(t *testing.T) *overlapRig {
	count := newStoreCount(t)
	count.seen = make(chan int, 16)
	r := &overlapRig{count: count, clock: time.Unix(1_000_000, 0)}
	r.l = newLimiter(Limits{MaxLiveJobs: 2}, nil, time.Second, r.count)
	r.l.now = func() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.clock }
	return r
}

func (r *overlapRig) refreshPasses() {
	r.mu.Lock()
	r.clock = r.clock.Add(2 * time.Second)
	r.mu.Unlock()
}

// lastRead is what a read since the last one taken from c.seen saw; the
// test fails when there was none.
func lastRead(t *testing.T, c *storeCount) int {
	t.Helper()
	select {
	case n := <-c.seen:
		return n
	default:
		t.Fatal("the count was not read again")
		return 0
	}
}

type admission struct {
	done  func(bool)
	ok    bool
	limit int
	err   error
}

// admitAsync runs an admission in the background and returns its outcome.
func (r *overlapRig) admitAsync(ctx context.Context) <-chan admission {
	out := make(chan admission, 1)
	go func() {
		var a admission
		a.done, a.ok, a.limit, a.err = r.l.admitLive(ctx, "acme")
		out <- a
	}()
	return out
}

// A read of the live count that overlaps a creation whose job has committed
// counts that job twice (read, and in flight): at the limit, the admission
// waits for the creation to end and reads again instead of refusing the
// owner below its limit. (Found by review: only jobs created during a read
// were treated so, not creations in flight during it.)
func TestLiveCountCommittedButNotDoneDoesNotRefuseBelowLimit(t *testing.T) {
	r := newOverlapRig(t)
	ctx := context.Background()
	doneA, ok, _, err := r.l.admitLive(ctx, "acme")
	if err != nil || !ok {
		t.Fatalf("first admission: %v %v", ok, err)
	}
	<-r.count.seen
	r.count.commitJob(t, "acme", "a") // A's job commits; its done has not run yet
	r.refreshPasses()
	b := r.admitAsync(ctx)
	if n := <-r.count.seen; n != 1 { // B reads while A is in flight
		t.Fatalf("read %d", n)
	}
	doneA(true)
	got := <-b
	if got.err != nil || !got.ok {
		t.Fatalf("refused at max_live_jobs %d (err %v) while the owner has 1 live job", got.limit, got.err)
	}
	got.done(false)
	if n := lastRead(t, r.count); n != 1 {
		t.Fatalf("the second read saw %d", n)
	}
}

// The same overlap when the in-flight job had not committed at the read:
// the read again sees it, and the owner, at its limit, is refused — never
// taken above it.
func TestLiveCountOverlapStillRefusesAtLimit(t *testing.T) {
	r := newOverlapRig(t)
	ctx := context.Background()
	doneA, ok, _, err := r.l.admitLive(ctx, "acme")
	if err != nil || !ok {
		t.Fatalf("first admission: %v %v", ok, err)
	}
	<-r.count.seen
	r.count.commitJob(t, "acme", "other") // another replica's job; A's has not committed
	r.refreshPasses()
	b := r.admitAsync(ctx)
	<-r.count.seen
	r.count.commitJob(t, "acme", "a") // A's job commits
	doneA(true)
	got := <-b
	if got.err != nil || got.ok || got.limit != 2 {
		t.Fatalf("admitted %v (limit %d, err %v) with 2 live jobs of 2", got.ok, got.limit, got.err)
	}
	if n := lastRead(t, r.count); n != 2 {
		t.Fatalf("refused on a read that saw %d", n)
	}
}

// An admission waiting for overlapping creations ends with its request.
func TestLiveCountOverlapWaitEndsWithContext(t *testing.T) {
	r := newOverlapRig(t)
	doneA, ok, _, err := r.l.admitLive(context.Background(), "acme")
	if err != nil || !ok {
		t.Fatalf("first admission: %v %v", ok, err)
	}
	defer doneA(true)
	<-r.count.seen
	r.count.commitJob(t, "acme", "other")
	r.refreshPasses()
	ctx, cancel := context.WithCancel(context.Background())
	b := r.admitAsync(ctx)
	<-r.count.seen
	cancel()
	if got := <-b; !errors.Is(got.err, context.Canceled) || got.ok {
		t.Fatalf("admitted %v, err %v; want the context's error", got.ok, got.err)
	}
}
