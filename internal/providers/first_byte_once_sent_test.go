package providers

import (
	"context"
	"net/http/httptrace"
	"sync"
	"testing"
)

// firstByteOnceSent returns a context, derived from parent, whose call has
// its first-byte deadline pass (fireFirstByte) once its request has been
// written whole: httptrace's
// WroteRequest, heard after the adapter's transport has recorded it
// (callTrace.wroteRequest runs first: the transport's trace wraps this one).
// A short first_byte_timeout raced the connection instead: under load it
// passed before the request was sent, and the call ended "not sent" rather
// than with the unknown outcome a test of a silent provider asserts. Give
// the call a first-byte deadline no test will wait for (an hour): only this
// makes it pass. The test fails if the adapter gave it none (the call is
// then cancelled, not left to its timeout).
func firstByteOnceSent(t *testing.T, parent context.Context) context.Context {
	t.Helper()
	watched := make(chan *CallWatch, 4)
	ctx, cancel := context.WithCancel(parent)
	t.Cleanup(cancel)
	ctx = context.WithValue(ctx, watchedKey{}, func(w *CallWatch) { watched <- w })
	sent := make(chan struct{})
	var once sync.Once
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			once.Do(func() { close(sent) })
		}
	}})
	done, exited := make(chan struct{}), make(chan struct{})
	var sentSeen, fired bool // set by the goroutine before exited closes
	go func() {
		defer close(exited)
		var w *CallWatch
		select {
		case w = <-watched:
		case <-done:
			return
		}
		select {
		case <-sent:
			sentSeen = true
			fired = fireFirstByte(w) // returns once the call's context has ended
			if !fired {
				cancel() // no deadline to pass: the call is not left to its timeout
			}
		case <-done:
		}
	}()
	t.Cleanup(func() {
		close(done)
		<-exited
		switch {
		case !sentSeen:
			t.Errorf("the call's request was never written whole: its first-byte deadline was not made to pass")
		case !fired:
			t.Errorf("the call was given no first-byte deadline to pass")
		}
	})
	return ctx
}
