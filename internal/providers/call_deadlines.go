package providers

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errNoFirstByte is the cancellation cause when no response arrived within the
// first-byte deadline. (A stall between events uses errStreamStalled.)
var errNoFirstByte = errors.New("first byte timeout")

// callDeadlines applies the first-byte and idle deadlines of one call by
// cancelling its context with a cause: a blocked body read is only unblocked by
// cancelling the request's context, and the cause tells a stall or a silent
// provider from the attempt's total deadline (the parent's) or a cancel.
//
// The first-byte timer runs from creation until gotFirstByte; the idle timer
// runs from gotFirstByte and is reset by touch (one per stream event).
type callDeadlines struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	firstByte *time.Timer
	idle      *time.Timer
	idleD     time.Duration
	gotBytes  bool
}

func newAttemptDeadlines(parent context.Context, firstByte, idle time.Duration) *callDeadlines {
	ctx, cancel := context.WithCancelCause(parent)
	d := &callDeadlines{ctx: ctx, cancel: cancel, idleD: idle}
	if firstByte > 0 {
		d.firstByte = time.AfterFunc(firstByte, func() { cancel(errNoFirstByte) })
	}
	return d
}

// gotFirstByte records that the response began: the first-byte deadline stops
// and the idle deadline starts.
func (d *callDeadlines) gotFirstByte() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gotBytes {
		return
	}
	d.gotBytes = true
	if d.firstByte != nil {
		d.firstByte.Stop()
	}
	if d.idleD > 0 {
		d.idle = time.AfterFunc(d.idleD, func() { d.cancel(errStreamStalled) })
	}
}

// touch records a stream event: the idle deadline starts again.
func (d *callDeadlines) touch() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.idle != nil {
		d.idle.Reset(d.idleD)
	}
}

// received reports whether any response byte arrived.
func (d *callDeadlines) received() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gotBytes
}

// cause is errNoFirstByte or errStreamStalled when one of these deadlines
// ended the call, else nil.
func (d *callDeadlines) cause() error {
	c := context.Cause(d.ctx)
	if errors.Is(c, errNoFirstByte) || errors.Is(c, errStreamStalled) {
		return c
	}
	return nil
}

func (d *callDeadlines) stop() {
	d.mu.Lock()
	if d.firstByte != nil {
		d.firstByte.Stop()
	}
	if d.idle != nil {
		d.idle.Stop()
	}
	d.mu.Unlock()
	d.cancel(nil)
}
