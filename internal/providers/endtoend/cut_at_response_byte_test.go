package endtoend_test

import (
	"context"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"github.com/routerhq/router/internal/providers"
)

// cutAtResponseByte is a streaming provider whose calls reach a deadline once
// the first byte of the provider's response has come — httptrace's
// GotFirstResponseByte, heard after the adapter's transport told the call's
// CallWatch (ResponseStarted: the transport's trace wraps this one) —
// rather than after a duration a loaded machine may spend connecting. It
// stands for the attempt's timeout, which only package providers' own tests
// can end when they choose (endableTotals): the deadline of the call's
// context, which the adapter's CallWatch classifies alike once response
// bytes came (stream_timeout, received). cut counts the calls it cut.
type cutAtResponseByte struct {
	providers.Provider
	stream providers.Streamer
	cut    atomic.Int32
}

func newCutAtResponseByte(p interface {
	providers.Provider
	providers.Streamer
}) *cutAtResponseByte {
	return &cutAtResponseByte{Provider: p, stream: p}
}

func (p *cutAtResponseByte) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	ctx, release := p.deadline(ctx)
	defer release()
	return p.Provider.Complete(ctx, req)
}

func (p *cutAtResponseByte) CompleteStream(ctx context.Context, req *providers.Request, onDelta func(string)) (*providers.Response, error) {
	ctx, release := p.deadline(ctx)
	defer release()
	return p.stream.CompleteStream(ctx, req, onDelta)
}

// deadline returns a context, derived from parent, whose deadline passes at
// the first response byte, and its release.
func (p *cutAtResponseByte) deadline(parent context.Context) (context.Context, func()) {
	d := &passableDeadline{Context: parent, done: make(chan struct{})}
	stop := context.AfterFunc(parent, d.pass)
	var once sync.Once
	ctx := httptrace.WithClientTrace(d, &httptrace.ClientTrace{GotFirstResponseByte: func() {
		once.Do(func() {
			p.cut.Add(1)
			d.pass()
		})
	}})
	return ctx, func() { stop() }
}

// passableDeadline is a context whose deadline passes when pass is called
// (or ends as its parent does, when that comes first).
type passableDeadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func (d *passableDeadline) pass() { d.once.Do(func() { close(d.done) }) }

func (d *passableDeadline) Done() <-chan struct{} { return d.done }

func (d *passableDeadline) Err() error {
	select {
	case <-d.done:
	default:
		return nil
	}
	if err := d.Context.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded
}
