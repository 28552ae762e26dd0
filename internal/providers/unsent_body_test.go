package providers

import (
	"context"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A first_byte_timeout that fires while the request's body is still being
// written (the server accepted the connection and never read) was timeout
// with OutcomeUnknown: the job waited for a resolution of a request the
// provider never had whole, so cannot have processed. It is a timeout with a
// known outcome, NotSent. Found by review.
func TestDeadlineWhileRequestBodyUnsentIsNotUnknown(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	u := rawServer(t, func(c net.Conn) { <-hold }) // accepts, never reads
	p := newTestAdapter(t, u, func(c *OpenAIConfig) { c.FirstByteTimeout = 2 * time.Second; c.Timeout = 5 * time.Second })
	req := testRequest()
	req.Messages[1].Content = strings.Repeat("x", 24<<20) // larger than the socket buffers
	_, err := p.Complete(context.Background(), req)
	e := mustError(t, err)
	if e.OutcomeUnknown || !e.NotSent || e.Kind != KindTimeout {
		t.Errorf("got kind=%s unknown=%v notsent=%v (%q): the request body was never fully written, so the provider cannot have processed it",
			e.Kind, e.OutcomeUnknown, e.NotSent, e.Message)
	}
}

// unsentBodyAdapters are both adapters, with a first_byte_timeout of fb.
var unsentBodyAdapters = map[string]func(t *testing.T, url string, fb time.Duration) Provider{
	"openai": func(t *testing.T, url string, fb time.Duration) Provider {
		return newTestAdapter(t, url, func(c *OpenAIConfig) { c.FirstByteTimeout = fb; c.Timeout = 5 * fb })
	},
	"anthropic": func(t *testing.T, url string, fb time.Duration) Provider {
		return newAnthropicAdapter(t, url, func(c *AnthropicConfig) { c.FirstByteTimeout = fb; c.Timeout = 5 * fb })
	},
}

// smallBufferServer is rawServer whose connections have a small receive
// buffer, so that a request of a few MiB a server does not read stays
// unsent.
func smallBufferServer(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serve(c) }()
		}
	}()
	return "http://" + l.Addr().String() + "/v1"
}

// A call cancelled (a hedge loser, a cancelled job) while its request's body
// is still being written is NotSent, as one cancelled before a connection:
// both adapters (they share the transport that watches the writing).
func TestCancelWhileRequestBodyUnsentIsNotSent(t *testing.T) {
	for name, newP := range unsentBodyAdapters {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hold := make(chan struct{})
			t.Cleanup(func() { close(hold) })
			u := smallBufferServer(t, func(c net.Conn) {
				_, _ = c.Read(make([]byte, 1)) // the request is being written
				cancel()
				<-hold // and is never read further
			})
			req := testRequest()
			req.Messages[1].Content = strings.Repeat("x", 8<<20) // past the client's send buffer (4 MiB at most)
			_, err := newP(t, u, time.Minute).Complete(ctx, req)
			if e := mustError(t, err); e.Kind != KindCancelled || !e.NotSent {
				t.Errorf("got kind=%s notsent=%v (%q), want cancelled, not sent", e.Kind, e.NotSent, e.Message)
			}
		})
	}
}

// signalDeadline is a context whose deadline passes when its channel is
// closed: a job's deadline that passes exactly when a test says.
type signalDeadline struct {
	context.Context
	done chan struct{}
}

func (c signalDeadline) Done() <-chan struct{} { return c.done }

func (c signalDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// A deadline (the job's) that passes while the request's body is still
// being written is a timeout with a known outcome, NotSent, for both
// adapters: unlike TestDeadlineWhileRequestBodyUnsentIsNotUnknown, whose
// first_byte_timeout may pass before the connection on a loaded machine,
// the deadline passes only once the server has begun reading.
func TestJobDeadlineWhileRequestBodyUnsentIsNotUnknown(t *testing.T) {
	for name, newP := range unsentBodyAdapters {
		t.Run(name, func(t *testing.T) {
			ctx := signalDeadline{Context: context.Background(), done: make(chan struct{})}
			var once sync.Once
			hold := make(chan struct{})
			t.Cleanup(func() { close(hold) })
			u := smallBufferServer(t, func(c net.Conn) {
				_, _ = c.Read(make([]byte, 1)) // the request is being written
				once.Do(func() { close(ctx.done) })
				<-hold // and is never read further
			})
			req := testRequest()
			req.Messages[1].Content = strings.Repeat("x", 8<<20)
			_, err := newP(t, u, time.Minute).Complete(ctx, req)
			e := mustError(t, err)
			if e.Kind != KindTimeout || e.OutcomeUnknown || !e.NotSent {
				t.Errorf("got kind=%s unknown=%v notsent=%v (%q), want timeout, known, not sent", e.Kind, e.OutcomeUnknown, e.NotSent, e.Message)
			}
			if !strings.Contains(e.Message, "still being sent") {
				t.Errorf("message %q does not say the request was still being sent", e.Message)
			}
		})
	}
}

// A request written whole and then no response byte before the call's
// timeout (a call that is not streamed has no first-byte deadline:
// unstreamedDeadlines) stays an unknown outcome (SPEC §6.7): the provider
// may be working on it. The timeout passes once the request was written
// (totalEndsOnceSent), not after a wait a loaded machine may spend
// connecting.
func TestDeadlineAfterRequestWrittenIsUnknown(t *testing.T) {
	for name, newP := range unsentBodyAdapters {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hold := make(chan struct{})
			t.Cleanup(func() { close(hold) })
			u := rawServer(t, func(c net.Conn) {
				readRequest(c)
				<-hold // never answers
			})
			_, err := newP(t, u, time.Hour).Complete(totalEndsOnceSent(t, context.Background()), testRequest())
			if e := mustError(t, err); e.Kind != KindTimeout || !e.OutcomeUnknown || e.NotSent {
				t.Errorf("got kind=%s unknown=%v notsent=%v (%q), want timeout, unknown, sent", e.Kind, e.OutcomeUnknown, e.NotSent, e.Message)
			}
		})
	}
}
