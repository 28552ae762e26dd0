package api

import (
	"context"
	"fmt"
	"time"
)

// liveReadTimeout bounds one read of an owner's live job count (a single
// indexed count): past it the admission that read it, and those that waited
// for it, are answered 503 (the database is unreachable or every connection
// is in use) rather than held as long as their callers would wait.
const liveReadTimeout = 3 * time.Second

// liveRead is a read of an owner's live count in progress
// (ownerLimit.reading). Its fields are set under the owner's lock, before
// done is closed.
type liveRead struct {
	done chan struct{} // closed when the read has ended
	// err is the read's error, which the admissions that waited for it
	// return too (the database's; a timeout is liveReadTimeout's).
	err error
	// again: the read ended for a reason of the request that made it (it
	// left, or the read panicked), not the database's: an admission that
	// waited for it reads the count itself.
	again bool
	// created counts the jobs whose creation ended (done) during the read:
	// the read may or may not have seen each (it depends on whether its
	// commit came first), so they are uncertain once it is applied.
	created int
	// ended: a job counted against the owner ended during the read
	// (liveSlot.ended), which the read may have counted.
	ended bool
	// stale: the database refused a creation by max_live_jobs during the
	// read (liveRefusedAtClaim), which may have been before its count: the
	// count is read again at the next admission.
	stale bool
}

// readCount reads owner's live count from the database, bounded by
// l.readTimeout as well as ctx, and applies it (o.mu held, and let go
// meanwhile: o.reading says a read is in progress). Holding the lock across
// the query made every other creating request of the owner wait for it,
// whether or not its own caller had left, and so the answers of jobs already
// created (done) and of the database's refusals (liveRefusedAtClaim).
func (o *ownerLimit) readCount(ctx context.Context, l *limiter, owner string) error {
	r := &liveRead{done: make(chan struct{}), again: true}
	o.reading = r
	var n int
	var err error
	func() {
		o.mu.Unlock()
		// Deferred, so that a panic of the read still takes the lock back
		// (the caller lets it go) and ends the read for those waiting.
		defer func() {
			o.mu.Lock()
			o.reading = nil
			close(r.done)
		}()
		rctx, cancel := context.WithTimeout(ctx, l.readTimeout)
		defer cancel()
		n, err = l.count.CountLiveJobs(rctx, owner)
		if err != nil {
			r.again = ctx.Err() != nil // this request's end, not the database's
			r.err = fmt.Errorf("read the owner's live job count (within %s): %w", l.readTimeout, err)
			return
		}
		r.again = false
	}()
	if err != nil {
		return r.err
	}
	// Every creation in flight now was in flight during the read (no
	// admission is made while a read is in progress), so may or may not be
	// in n, as may the jobs whose creation ended during it.
	o.counted, o.admitted, o.uncertain, o.overlap = n, 0, r.created, o.inflight
	o.readAt = l.now()
	if r.stale {
		o.readAt = time.Time{}
	}
	o.endedUnread = r.ended
	o.reads++
	return nil
}

// waitRead waits, with o.mu held and let go meanwhile, until the read r (made
// by another admission) has ended, or until ctx ends (its error). It returns
// r's error, unless r ended for a reason of its own request (r.again: the
// caller reads the count itself).
func (o *ownerLimit) waitRead(ctx context.Context, r *liveRead) error {
	o.mu.Unlock()
	defer o.mu.Lock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if r.err != nil && !r.again {
		return r.err
	}
	return nil
}

// forgetCount has o's count read again at the next admission, including when
// a read is in progress (o.mu held).
func (o *ownerLimit) forgetCount() {
	o.readAt = time.Time{}
	if o.reading != nil {
		o.reading.stale = true
	}
}
