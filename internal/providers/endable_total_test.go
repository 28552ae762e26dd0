package providers

import (
	"context"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"
)

// endableTotal is the total deadline of one call that passes when the test
// ends it (endNow), not after a duration: ended, it is the context withTotal
// makes with no time left — Err context.DeadlineExceeded, cause
// errTotalTimeout — so the call sees the error and the cause the real
// deadline gives. Its parent ending ends it as it ends withTotal's.
type endableTotal struct {
	parent   context.Context
	deadline time.Time
	done     chan struct{}
	stopWait func() bool

	mu      sync.Mutex
	ended   context.Context    // nil while it runs: then the context that ended it
	release context.CancelFunc // the ended context's, when it made one
}

func newEndableTotal(parent context.Context, total time.Duration) *endableTotal {
	c := &endableTotal{parent: parent, deadline: time.Now().Add(total), done: make(chan struct{})}
	c.stopWait = context.AfterFunc(parent, func() { c.end(parent, nil) })
	return c
}

// end ends the deadline's context as ended is (once; a later end is a no-op).
func (c *endableTotal) end(ended context.Context, release context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended != nil {
		if release != nil {
			release()
		}
		return
	}
	c.ended, c.release = ended, release
	close(c.done)
}

// endNow makes the deadline pass now, as withTotal's timer does.
func (c *endableTotal) endNow() {
	c.end(withTotal(c.parent, 0))
}

// stop is the deadline's CancelFunc (CallWatch.Stop): it ends it as
// cancelled, as withTotal's CancelFunc does.
func (c *endableTotal) stop() {
	c.stopWait()
	cancelled, cancel := context.WithCancel(c.parent)
	cancel()
	c.end(cancelled, nil)
	c.mu.Lock()
	release := c.release
	c.mu.Unlock()
	if release != nil {
		release()
	}
}

func (c *endableTotal) current() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

func (c *endableTotal) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *endableTotal) Done() <-chan struct{} { return c.done }

func (c *endableTotal) Err() error {
	if e := c.current(); e != nil {
		return e.Err()
	}
	return nil
}

// Value answers as the context that ended it, once ended: context.Cause
// finds the cause there.
func (c *endableTotal) Value(key any) any {
	if e := c.current(); e != nil {
		return e.Value(key)
	}
	return c.parent.Value(key)
}

// endableTotals returns a context, derived from parent, whose calls get
// total deadlines that pass only when the test calls end (a deadline of an
// hour or two, which no test waits for): end makes every total deadline made
// so far pass at once (endNow), with the error and cause of the real timer
// (errTotalTimeout). It does not block: the adapters' hooks may call it. A
// short total deadline raced the connection instead: under load it passed
// before the request was sent, or before the response began, and the call
// ended otherwise than the test asserts. The test fails if end was never
// called, or found no total deadline to end (the call is then cancelled, not
// left to its deadline).
func endableTotals(t *testing.T, parent context.Context) (context.Context, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	t.Cleanup(cancel)
	var (
		mu          sync.Mutex
		totals      []*endableTotal
		ended, none bool
	)
	ctx = context.WithValue(ctx, totalKey{}, func(parent context.Context, total time.Duration) (context.Context, context.CancelFunc) {
		c := newEndableTotal(parent, total)
		mu.Lock()
		totals = append(totals, c)
		mu.Unlock()
		return c, c.stop
	})
	end := func() {
		mu.Lock()
		ended = true
		made := append([]*endableTotal(nil), totals...)
		none = none || len(made) == 0
		mu.Unlock()
		if len(made) == 0 {
			cancel() // no deadline to pass: the call is not left to its timeout
		}
		for _, c := range made {
			c.endNow()
		}
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case !ended:
			t.Errorf("the call's total deadline was never ended: the moment the test waited for never came")
		case none:
			t.Errorf("the call was given no total deadline to end")
		}
	})
	return ctx, end
}

// totalEndsOnceSent is endableTotals whose total deadline passes once the
// call's request has been written whole: httptrace's WroteRequest, heard
// after the adapter's transport has recorded it (callTrace.wroteRequest runs
// first: the transport's trace wraps this one).
func totalEndsOnceSent(t *testing.T, parent context.Context) context.Context {
	t.Helper()
	ctx, end := endableTotals(t, parent)
	var once sync.Once
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			once.Do(end)
		}
	}})
}

// totalEndsAtFirstByte is endableTotals whose total deadline passes once the
// provider has begun answering: its first-byte hooks (OnFirstByte) — the
// whole headers of a call that is not streamed, the first chunk of a stream.
func totalEndsAtFirstByte(t *testing.T, parent context.Context) context.Context {
	t.Helper()
	ctx, end := endableTotals(t, parent)
	var once sync.Once
	return OnFirstByte(ctx, func() { once.Do(end) })
}

// totalEndsAtResponseByte is endableTotals whose total deadline passes once
// the first byte of a response has come, before its headers are whole:
// httptrace's GotFirstResponseByte, heard after the adapter's transport has
// told the call's CallWatch (ResponseStarted).
func totalEndsAtResponseByte(t *testing.T, parent context.Context) context.Context {
	t.Helper()
	ctx, end := endableTotals(t, parent)
	var once sync.Once
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() { once.Do(end) }})
}
