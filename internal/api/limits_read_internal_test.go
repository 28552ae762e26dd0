package api

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// blockingCount is a live count whose reads each report on entered, then
// hang until the test sends their result on release (or their context ends).
type blockingCount struct {
	entered chan context.Context
	release chan int
}

func newBlockingCount() *blockingCount {
	return &blockingCount{entered: make(chan context.Context, 16), release: make(chan int)}
}

func (b *blockingCount) CountLiveJobs(ctx context.Context, owner string) (int, error) {
	b.entered <- ctx
	select {
	case n := <-b.release:
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// hangBound only bounds a test that would otherwise hang (a deadlock is the
// failure); no outcome depends on it.
const hangBound = 10 * time.Second

// entered waits for the next read of the count to start.
func (b *blockingCount) waitEntered(t *testing.T) context.Context {
	t.Helper()
	select {
	case ctx := <-b.entered:
		return ctx
	case <-time.After(hangBound):
		t.Fatal("the live count was not read")
		return nil
	}
}

// readRig is a limiter of max_live_jobs limit over a blockingCount, with a
// clock the test moves (refresh 1 s).
type readRig struct {
	l     *limiter
	count *blockingCount
	clock chan time.Time // holds the clock's time (a one-slot mutex)
}

func newReadRig(limit int) *readRig {
	r := &readRig{count: newBlockingCount(), clock: make(chan time.Time, 1)}
	r.clock <- time.Unix(1_000_000, 0)
	r.l = newLimiter(Limits{}, map[string]Limits{"acme": {MaxLiveJobs: limit}}, time.Second, r.count)
	r.l.now = func() time.Time { t := <-r.clock; r.clock <- t; return t }
	return r
}

func (r *readRig) refreshPasses() { t := <-r.clock; r.clock <- t.Add(2 * time.Second) }

type admitted struct {
	done    liveDone
	refused *liveRefusal
	err     error
}

func (r *readRig) admitAsync(ctx context.Context, key string) <-chan admitted {
	out := make(chan admitted, 1)
	go func() {
		var a admitted
		a.done, a.refused, a.err = r.l.admit(ctx, "acme", key)
		out <- a
	}()
	return out
}

func outcome(t *testing.T, what string, c <-chan admitted) admitted {
	t.Helper()
	select {
	case a := <-c:
		return a
	case <-time.After(hangBound):
		t.Fatalf("%s never returned", what)
		return admitted{}
	}
}

// admitFirst admits one job, its read of the count answering n.
func (r *readRig) admitFirst(t *testing.T, n int) liveDone {
	t.Helper()
	first := r.admitAsync(context.Background(), "k1")
	r.count.waitEntered(t)
	r.count.release <- n
	a := outcome(t, "the first admission", first)
	if a.err != nil || a.refused != nil {
		t.Fatalf("the first admission: refused %+v, err %v", a.refused, a.err)
	}
	return a.done
}

// An admission whose caller has left returns at once while another
// request's read of the owner's live count hangs: the owner's lock was held
// across that read, so it waited (sync.Mutex ignores its context) for as long
// as the database did. Found by review (rauth3).
func TestLiveCountReadDoesNotHoldAnAdmissionWhoseCallerLeft(t *testing.T) {
	r := newReadRig(5)
	reader := r.admitAsync(context.Background(), "k1")
	r.count.waitEntered(t) // the read hangs
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the second caller has hung up
	if a := outcome(t, "an admission whose caller left, behind another's read", r.admitAsync(ctx, "k2")); !errors.Is(a.err, context.Canceled) {
		t.Fatalf("an admission whose caller left, behind another's read: refused %+v, err %v; want context.Canceled", a.refused, a.err)
	}
	r.count.release <- 0 // only now does the read end
	if a := outcome(t, "the reading admission", reader); a.err != nil || a.refused != nil {
		t.Fatalf("the reading admission: refused %+v, err %v", a.refused, a.err)
	}
}

// The end of a created job's admission (done, then ended) and the database's
// refusal (liveRefusedAtClaim) need no read of the count: they do not wait
// for one another request is making (the lock was held across it: a created
// job could not be answered until the database answered the count).
func TestLiveCountReadDoesNotHoldTheEndOfAnAdmission(t *testing.T) {
	r := newReadRig(5)
	done := r.admitFirst(t, 0)
	r.refreshPasses()
	reader := r.admitAsync(context.Background(), "k2")
	r.count.waitEntered(t) // that read hangs
	ended := make(chan struct{})
	go func() {
		done(true)()
		(&Server{limits: r.l}).liveRefusedAtClaim("acme", &store.LiveLimitError{Owner: "acme", Limit: 5}, false)
		close(ended)
	}()
	select {
	case <-ended:
	case <-reader:
		t.Fatal("the reading admission returned before its read was answered")
	case <-time.After(hangBound):
		t.Fatal("done, ended and liveRefusedAtClaim waited for another request's read of the live count")
	}
	r.count.release <- 1
	if a := outcome(t, "the reading admission", reader); a.err != nil || a.refused != nil {
		t.Fatalf("the reading admission: refused %+v, err %v", a.refused, a.err)
	}
}

// A job whose creation ended while the count was being read is still counted
// after that read, which may not have seen it: at the limit the count is read
// again before anyone is admitted, so the owner is never taken past it.
func TestLiveCountJobCreatedDuringAReadIsCounted(t *testing.T) {
	r := newReadRig(1)
	done := r.admitFirst(t, 0)
	r.refreshPasses()
	second := r.admitAsync(context.Background(), "k2")
	r.count.waitEntered(t)
	done(true)           // the first job commits during the read...
	r.count.release <- 0 // ...which did not see it
	r.count.waitEntered(t)
	r.count.release <- 1 // the second read does
	a := outcome(t, "the second admission", second)
	if a.err != nil || a.refused == nil || a.refused.limit != 1 {
		t.Fatalf("second admission with 1 live job of 1: refused %+v, err %v; want refused at 1", a.refused, a.err)
	}
}

// The read of the count has a deadline of its own (l.readTimeout), whatever
// the request's: a slow database or a pool with no free connection holds the
// owner's creating requests no longer than that.
func TestLiveCountReadHasItsOwnDeadline(t *testing.T) {
	r := newReadRig(5)
	r.l.readTimeout = time.Hour // long enough that the read cannot end by it here
	before := time.Now()
	reader := r.admitAsync(context.Background(), "k1") // no deadline of its own
	ctx := r.count.waitEntered(t)
	deadline, ok := ctx.Deadline()
	r.count.release <- 0
	if a := outcome(t, "the reading admission", reader); a.err != nil {
		t.Fatal(a.err)
	}
	if !ok || deadline.Before(before.Add(time.Hour)) || deadline.After(time.Now().Add(time.Hour)) {
		t.Fatalf("the read's deadline: %v (set %v); want l.readTimeout (1h) after the read started", deadline, ok)
	}
}

// A read whose own request left ends for that request only: an admission
// that waited for it reads the count itself.
func TestLiveCountReadOfALeftRequestIsReadAgain(t *testing.T) {
	r := newReadRig(5)
	ctx, cancel := context.WithCancel(context.Background())
	reader := r.admitAsync(ctx, "k1")
	r.count.waitEntered(t)
	other := r.admitAsync(context.Background(), "k2")
	cancel()
	if a := outcome(t, "the admission that left", reader); !errors.Is(a.err, context.Canceled) {
		t.Fatalf("the admission whose request left: refused %+v, err %v; want context.Canceled", a.refused, a.err)
	}
	r.count.waitEntered(t) // the other admission reads in turn
	r.count.release <- 0
	if a := outcome(t, "the other admission", other); a.err != nil || a.refused != nil {
		t.Fatalf("the other admission: refused %+v, err %v", a.refused, a.err)
	}
}
