package store

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// background tracks the writes a Store runs on goroutines of their own,
// past the call that started them: the hand-over of a claim whose answer
// was lost (handOverLostClaim) and the wake of webhook deliveries
// (wakeDeliveries). Close waits for them before the caller closes the pool:
// started during a shutdown (a job created while stopping), such a write
// would otherwise find the pool closed under it, and a lost claim's job,
// never handed over, have its first attempt, never sent, become `unknown`
// at lease expiry (SPEC §17).
type background struct {
	mu      sync.Mutex
	closed  bool // Close began: nothing more is started
	running map[*backgroundTask]struct{}
	idle    chan struct{}   // closed when running empties
	ctx     context.Context // every task's; cancelled by Close past its wait
	cancel  context.CancelFunc
}

// backgroundTask is one write under way; what names it in Close's log.
type backgroundTask struct{ what string }

// backgroundCloseWait bounds Close's wait for background writes: a few
// seconds, as a shutdown's last writes have (notSentRetryFor). A hand-over
// on a database that answers ends in milliseconds; one on a database that
// does not would retry for lostClaimRetryFor, longer than a shutdown should
// take (Kubernetes kills a pod 30 s after SIGTERM by default), and is
// cancelled then: recovery settles its job when the lease expires.
const backgroundCloseWait = 5 * time.Second

// backgroundCancelWait bounds Close's wait for cancelled background writes to
// return: each waiting call of theirs takes the cancelled context, so they
// end at once unless a connection hangs past pgx's cancellation.
const backgroundCancelWait = time.Second

// backgroundCloseWaitNS and backgroundCancelWaitNS are backgroundCloseWait's
// and backgroundCancelWait's values (nanoseconds): a test sets them
// (SetBackgroundCloseWaits).
var backgroundCloseWaitNS, backgroundCancelWaitNS atomic.Int64

func init() {
	backgroundCloseWaitNS.Store(int64(backgroundCloseWait))
	backgroundCancelWaitNS.Store(int64(backgroundCancelWait))
}

// start runs f on a goroutine of its own, tracked until it returns, with a
// context Close cancels past its wait; it reports false, and runs nothing,
// once Close has begun.
func (b *background) start(what string, f func(ctx context.Context)) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	if b.ctx == nil {
		b.ctx, b.cancel = context.WithCancel(context.Background())
		b.running = map[*backgroundTask]struct{}{}
	}
	if len(b.running) == 0 {
		b.idle = make(chan struct{})
	}
	t := &backgroundTask{what: what}
	b.running[t] = struct{}{}
	ctx := b.ctx
	b.mu.Unlock()
	go func() {
		defer b.end(t)
		f(ctx)
	}()
	return true
}

// end forgets t, which has returned.
func (b *background) end(t *backgroundTask) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.running, t)
	if len(b.running) == 0 {
		close(b.idle)
	}
}

// close refuses new tasks and waits for those running, up to wait; past it
// it logs what was left, cancels them and waits for them to return, up to
// cancelWait.
func (b *background) close(wait, cancelWait time.Duration, log *slog.Logger) {
	b.mu.Lock()
	b.closed = true
	idle, n := b.idle, len(b.running)
	b.mu.Unlock()
	if n == 0 || awaitClosed(idle, wait) {
		return
	}
	log.Warn("background database writes still running at close after waiting for them: cancelling them "+
		"(a job whose creation's outcome was lost and that is left is settled by recovery when its lease expires)",
		"waited", wait, "left", b.left())
	b.cancel()
	if !awaitClosed(idle, cancelWait) {
		log.Error("background database writes still running after they were cancelled: closing without them",
			"waited", cancelWait, "left", b.left())
	}
}

// left names the tasks still running.
func (b *background) left() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var names []string
	for t := range b.running {
		names = append(names, t.what)
	}
	return names
}

// awaitClosed reports whether ch is closed within d (already closed: true,
// whatever d).
func awaitClosed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
