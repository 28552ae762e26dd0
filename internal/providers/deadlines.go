package providers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Deadlines are the three deadlines of one attempt (SPEC §15). A zero
// deadline is not enforced.
type Deadlines struct {
	// FirstByte bounds the wait for the first response byte: the first byte
	// of the response's status line (or of an interim 1xx response). Once it
	// has come the deadline no longer applies, however slowly the rest of
	// the headers follows (ResponseStarted).
	FirstByte time.Duration
	// Idle bounds a gap without any response byte, counted from the first
	// one: a stream's chunks and the comments and pings a provider sends to
	// keep the connection open while its model works all end a gap (the
	// adapters report every body read, see callTrace.onResponse). Leave it
	// zero for a call that is not streamed.
	Idle time.Duration
	// Total bounds the whole call.
	Total time.Duration
	// Stream says the call is streamed: the provider has begun answering
	// (the first-byte hooks, OnFirstByte) at its first chunk or event, not
	// at its headers. Many servers send a stream's headers at once and then
	// only SSE comments or pings while the model works (OpenRouter, vLLM
	// behind uvicorn, another router): those bytes keep the call's deadlines
	// as response bytes, but are no sign that an answer is coming — a hedge
	// is still due and the time to first byte is still running.
	Stream bool
}

// unstreamedDeadlines are the deadlines of a call that is not streamed: its
// timeout only. Such a call's response begins — its status line — only once
// the provider has generated the whole answer, so a first-byte deadline would
// bound the generation itself and make every answer slower than it `unknown`
// (a job blocked until an operator resolves it) although the provider is
// working as asked. A call that gets no byte within the timeout is still
// `unknown` (SPEC §6.7). The idle deadline applies to streams only.
func unstreamedDeadlines(total time.Duration) Deadlines {
	return Deadlines{Total: total}
}

// Causes a CallWatch cancels its context with.
var (
	errFirstByteTimeout = errors.New("first byte timeout")
	errStreamStalled    = errors.New("stream idle timeout")
	errTotalTimeout     = fmt.Errorf("attempt timeout: %w", context.DeadlineExceeded)
)

// CallWatch enforces Deadlines on one call and classifies how a call cut by
// one of them ended. It is the one place that decides the rule of SPEC §15: a
// call that received response bytes and was then stalled, cut or overran has a
// known outcome (failed, Received); only a call with no response byte at all
// when a deadline fired has an unknown one. The OpenAI-compatible and
// Anthropic adapters both use it, so they classify deadlines alike (see
// TestDeadlinesAgreeAcrossAdapters); any adapter can: call ResponseStarted
// when a response's first byte arrives (Redirected when that response is a
// redirect), Received when the response's headers arrive and whenever body
// bytes do, and Chunk for each stream chunk (or event).
type CallWatch struct {
	provider string
	d        Deadlines
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stopT    context.CancelFunc
	start    time.Time

	onFirstByte func() // the call's context's first-byte hooks (OnFirstByte); nil: none

	mu        sync.Mutex
	stopped   bool          // Stop ran: a late read of the body restarts no timer
	firstByte time.Duration // 0: no byte yet
	// started: the first byte of a response came (ResponseStarted) whose
	// headers are not whole yet. Cleared when that response is a redirect
	// (Redirected): its bytes are not the answer's.
	started bool
	chunks  int
	first   *time.Timer
	idle    *time.Timer
}

// WatchCall starts watching a call made with the returned context. Stop it
// when the call has ended.
func WatchCall(ctx context.Context, provider string, d Deadlines) (context.Context, *CallWatch) {
	w := &CallWatch{provider: provider, d: d, start: time.Now(), onFirstByte: firstByteHook(ctx)}
	tctx, stopT := context.WithCancel(ctx)
	if d.Total > 0 {
		total := withTotal
		if f, _ := ctx.Value(totalKey{}).(func(context.Context, time.Duration) (context.Context, context.CancelFunc)); f != nil {
			total = f
		}
		tctx, stopT = total(ctx, d.Total)
	}
	w.ctx, w.cancel = context.WithCancelCause(tctx)
	w.stopT = stopT
	if d.FirstByte > 0 {
		w.first = time.AfterFunc(d.FirstByte, w.firstByteDue)
	}
	if watched, _ := ctx.Value(watchedKey{}).(func(*CallWatch)); watched != nil {
		watched(w)
	}
	return w.ctx, w
}

// firstByteDue is the first-byte deadline passing: it cuts the call unless a
// response byte came. Tests call it when they choose (watchedKey).
func (w *CallWatch) firstByteDue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.firstByte == 0 && !w.started {
		w.cancel(errFirstByteTimeout)
	}
}

// watchedKey is the context key of a function that is shown each CallWatch
// a call made with the context starts: tests see the deadlines an adapter
// gave a call, and can make its first-byte deadline pass when they choose
// rather than after a wait (fireFirstByte in the tests).
type watchedKey struct{}

// withTotal makes a call's total deadline: its context ends with
// errTotalTimeout once total has passed.
func withTotal(ctx context.Context, total time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, total, errTotalTimeout)
}

// totalKey is the context key of a function that makes, in withTotal's
// place, the total deadline of each call made with the context: tests end it
// when they choose — once the provider has the request, or once its response
// began — with withTotal's error and cause, rather than after a wait a loaded
// machine may spend connecting (endableTotals in the tests). Only tests set
// it.
type totalKey struct{}

// Received records that response bytes arrived (the headers, or any bytes of
// the body): the first-byte deadline no longer applies and the idle deadline
// starts (or starts again).
func (w *CallWatch) Received() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if w.firstByte == 0 {
		w.firstByte = max(time.Since(w.start), time.Nanosecond)
		if w.first != nil {
			w.first.Stop()
		}
		if w.onFirstByte != nil && !w.d.Stream {
			// Under the lock, so that the hooks run once, before any later
			// Received returns; they must not block (OnFirstByte).
			w.onFirstByte()
		}
	}
	if w.d.Idle <= 0 {
		return
	}
	if w.idle == nil {
		w.idle = time.AfterFunc(w.d.Idle, func() { w.cancel(errStreamStalled) })
	} else {
		w.idle.Reset(w.d.Idle)
	}
}

// ResponseStarted records that the first byte of a response arrived, before
// its headers are whole (the adapters' transport reports it from
// httptrace's GotFirstResponseByte and Got1xxResponse): the first-byte
// deadline no longer applies, and a call cut later — by its whole timeout,
// the job's deadline, a cancellation — had response bytes, a known outcome
// (SPEC §15), however slowly the provider sends the rest of its headers (or
// however many interim 100 Continue it sends). It is not the first byte
// Received records: the first-byte hooks and FirstByte wait for the
// headers, whole, of a response that is not a redirect, as the time to first
// byte hedging learns and the sign that the provider began answering; and
// the idle deadline, which only Received starts, does not run between
// header lines (the transport does not see them come one by one).
func (w *CallWatch) ResponseStarted() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.firstByte > 0 || w.started {
		return
	}
	w.started = true
	if w.first != nil {
		w.first.Stop()
	}
}

// Redirected records that the response whose first byte ResponseStarted
// reported is a redirect the client follows (or refuses): its bytes are not
// the answer's, and the first-byte deadline, counted from the call's start,
// applies again to the next response — at once when it has passed.
func (w *CallWatch) Redirected() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.firstByte > 0 || !w.started {
		return
	}
	w.started = false
	if w.first == nil {
		return
	}
	if left := w.d.FirstByte - time.Since(w.start); left > 0 {
		w.first.Reset(left)
	} else {
		w.cancel(errFirstByteTimeout)
	}
}

// Chunk records one stream chunk (counted for the messages; its bytes have
// already been reported to Received by the adapter's transport, and Chunk
// reports them again for an adapter without one). The first chunk of a
// streamed call runs its first-byte hooks (Deadlines.Stream).
func (w *CallWatch) Chunk() {
	w.Received()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.chunks++
	if w.chunks == 1 && w.d.Stream && !w.stopped && w.onFirstByte != nil {
		w.onFirstByte() // under the lock, as in Received
	}
}

// firstByteKey is the context key of a call's first-byte hooks.
type firstByteKey struct{}

// OnFirstByte returns a context whose call reports the arrival of its first
// response byte to fn, while the call is still running: the router learns
// from it that a provider has begun answering long before the answer is whole
// (a hedge is due only for an attempt with no byte yet; adaptive hedging
// learns the target's time to first byte). Hooks set on the contexts ctx
// derives from run too, before fn. fn runs at most once per call, on the
// adapter's goroutine, and must not block.
//
// An adapter that uses a CallWatch reports it through Received; any other
// calls NotifyFirstByte.
func OnFirstByte(ctx context.Context, fn func()) context.Context {
	if outer := firstByteHook(ctx); outer != nil {
		inner := fn
		fn = func() { outer(); inner() }
	}
	return context.WithValue(ctx, firstByteKey{}, fn)
}

// NotifyFirstByte runs the first-byte hooks of a call's context
// (OnFirstByte). An adapter that does not use a CallWatch calls it once per
// call, when the provider's first response byte arrives.
func NotifyFirstByte(ctx context.Context) {
	if fn := firstByteHook(ctx); fn != nil {
		fn()
	}
}

func firstByteHook(ctx context.Context) func() {
	fn, _ := ctx.Value(firstByteKey{}).(func())
	return fn
}

// ResponseBegan reports whether the first byte of the call's response came
// (ResponseStarted; a redirect's does not count), whether or not its headers
// were whole after it. A call cut after it — however: a deadline, a reset, a
// status line broken off — reached the provider, which began answering: a
// known outcome (SPEC §15), never a reset before any response byte (SPEC
// §6.2) to retry on the same target.
func (w *CallWatch) ResponseBegan() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started || w.firstByte > 0
}

// FirstByte is the time to the first response byte (0: none came).
func (w *CallWatch) FirstByte() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstByte
}

// Stop releases the watch's timers and context.
func (w *CallWatch) Stop() {
	w.mu.Lock()
	w.stopped = true
	if w.first != nil {
		w.first.Stop()
	}
	if w.idle != nil {
		w.idle.Stop()
	}
	w.mu.Unlock()
	w.cancel(nil)
	w.stopT()
}

// Stalled reports whether the stream's read failed with err because the idle
// deadline (StreamIdleTimeout) passed — the adapter's own guess that the
// provider went silent, which a stream already whole (its finish_reason or
// message_stop came) excuses; the call's timeout, the job's deadline and a
// cancellation are not excused.
func (w *CallWatch) Stalled(err error) bool {
	e := w.Classify(err)
	return err != nil && e != nil && e.Kind == KindStreamStalled
}

// Classify is the error of a call whose watched context ended (a deadline, or
// the router cancelling it), with cause as its cause; nil when the context
// has not ended, and the adapter classifies the call's error itself.
func (w *CallWatch) Classify(cause error) *Error {
	if w.ctx.Err() == nil {
		return nil
	}
	w.mu.Lock()
	received, started, chunks := w.firstByte > 0, w.started, w.chunks
	w.mu.Unlock()
	why := context.Cause(w.ctx)
	var e *Error
	switch {
	case errors.Is(why, errStreamStalled):
		e = NewError(w.provider, KindStreamStalled, fmt.Sprintf("no response byte for %s after %d chunks (stream_idle_timeout)", w.d.Idle, chunks))
	case errors.Is(why, errFirstByteTimeout):
		e = NewError(w.provider, KindTimeout, fmt.Sprintf("no response byte within %s (first_byte_timeout): the provider may still be working on it", w.d.FirstByte))
	case errors.Is(w.ctx.Err(), context.Canceled) && !errors.Is(why, errTotalTimeout):
		e = NewError(w.provider, KindCancelled, "call cancelled by the router")
	case received:
		e = NewError(w.provider, KindStreamTimeout, fmt.Sprintf("the attempt's deadline passed after the provider began answering (%d chunks): the answer will not arrive whole", chunks))
	case started:
		e = NewError(w.provider, KindStreamTimeout, "the attempt's deadline passed while the provider was still sending its response's headers (they began and never ended): the answer will not arrive; "+
			"the provider, or a proxy in front of it, is failing: check its status and logs")
	case errors.Is(why, errTotalTimeout):
		e = NewError(w.provider, KindTimeout, fmt.Sprintf("no response byte within the attempt's timeout of %s", w.d.Total))
	default:
		e = NewError(w.provider, KindTimeout, "deadline passed before the provider answered")
	}
	e.Received = received || started
	e.Err = cause
	return e
}
