package providers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers/trickle"
)

// A provider that sends its status line at once and then its header lines
// one by one, past first_byte_timeout, has sent response bytes: the first-byte
// deadline stops at its first byte, the attempt's whole timeout then cuts the
// call, and the outcome is known (SPEC §15: unknown only when no response byte
// came before the first-byte deadline) — the race fails over instead of
// waiting for a resolution. The idle deadline does not run between header
// lines. The first-byte hooks (hedging, time to first byte) wait for whole
// headers, which never came.
//
// Both deadlines pass when the test says, once the status line's first byte
// came (firstByteDue, totalEndsAtResponseByte): short ones raced the
// connection, and under load the first-byte deadline passed before the
// status line was sent, an unknown outcome.
func TestTrickledHeadersAreAKnownFailure(t *testing.T) {
	d := Deadlines{FirstByte: time.Hour, Idle: time.Hour, Total: 2 * time.Hour}
	for _, a := range deadlineAdapters {
		for _, stream := range []bool{true, false} {
			t.Run(a.name+"/stream="+boolWord(stream), func(t *testing.T) {
				t.Parallel()
				url := trickle.Server(t, "HTTP/1.1 200 OK\r\n", "X-Trickle: still coming\r\n", 20*time.Millisecond)
				ctx, endTotal := endableTotals(t, context.Background())
				watched := make(chan *CallWatch, 4)
				ctx = context.WithValue(ctx, watchedKey{}, func(w *CallWatch) { watched <- w })
				var once sync.Once
				ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() {
					once.Do(func() {
						// After the adapter's transport told the CallWatch
						// (ResponseStarted): its trace wraps this one.
						// A call that is not streamed has no first-byte
						// deadline (unstreamedDeadlines).
						if w := <-watched; w.d.FirstByte > 0 {
							w.firstByteDue() // cuts the call, unknown, if the status line did not count
						}
						endTotal()
					})
				}})
				e, hooked := callForDeadline(t, ctx, a.new(t, url, d, stream), stream)
				if e.Kind != KindStreamTimeout || !e.Received || e.OutcomeUnknown {
					t.Fatalf("got %s received=%v unknown=%v, want %s received, not unknown (%v)",
						e.Kind, e.Received, e.OutcomeUnknown, KindStreamTimeout, e)
				}
				if !strings.Contains(e.Message, "headers") {
					t.Errorf("message %q does not say the headers never ended", e.Message)
				}
				if hooked {
					t.Error("the first-byte hooks ran, though the response's headers never ended")
				}
			})
		}
	}
}

// A provider that sends interim responses (100 Continue) on and on and never
// a final one has sent response bytes: past maxInterimResponses the call ends
// at once, a known failure, rather than unknown at first_byte_timeout.
//
// The first-byte deadline of a streamed call passes when the test says, once
// the first interim response's first byte came (firstByteDue): a real 300 ms
// one raced the connection, and under load it passed before the provider
// had sent anything, an unknown outcome. The interim responses go on after
// it; a call still running past maxInterimResponses ends at its timeout, a
// minute (a failure of the test, never waited for by a pass).
func TestEndlessInterimResponsesAreAKnownFailure(t *testing.T) {
	d := Deadlines{FirstByte: time.Hour, Total: time.Minute}
	for _, a := range deadlineAdapters {
		for _, stream := range []bool{true, false} {
			t.Run(a.name+"/stream="+boolWord(stream), func(t *testing.T) {
				t.Parallel()
				cont := "HTTP/1.1 100 Continue\r\n\r\n"
				url := trickle.Server(t, cont, cont, 40*time.Millisecond)
				watched := make(chan *CallWatch, 4)
				ctx := context.WithValue(context.Background(), watchedKey{}, func(w *CallWatch) { watched <- w })
				var (
					once  sync.Once
					fired atomic.Bool
				)
				// GotFirstResponseByte, not Got1xxResponse: the transport's
				// Got1xxResponse wraps the test's, and httptrace returns the
				// inner hook's error, which would hide the transport's
				// refusal past maxInterimResponses.
				ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() {
					once.Do(func() {
						// After the adapter's transport told the CallWatch
						// (ResponseStarted): its trace wraps this one. A
						// call that is not streamed has no first-byte
						// deadline (unstreamedDeadlines).
						if w := <-watched; w.d.FirstByte > 0 {
							w.firstByteDue() // cuts the call, unknown, if the interim response did not count
							fired.Store(true)
						}
					})
				}})
				e, hooked := callForDeadline(t, ctx, a.new(t, url, d, stream), stream)
				if stream && !fired.Load() {
					t.Errorf("the streamed call's first-byte deadline was not made to pass (no response byte, or no deadline)")
				}
				want := KindMalformedResponse
				if stream {
					want = KindStreamMalformed
				}
				if e.Kind != want || !e.Received || e.OutcomeUnknown {
					t.Fatalf("got %s received=%v unknown=%v, want %s received, not unknown (%v)",
						e.Kind, e.Received, e.OutcomeUnknown, want, e)
				}
				if !strings.Contains(e.Message, "interim responses") {
					t.Errorf("message %q does not name the interim responses", e.Message)
				}
				if hooked {
					t.Error("the first-byte hooks ran, though no final response came")
				}
			})
		}
	}
}

// The first byte of a redirect the client follows is not the answer's: the
// first-byte deadline, counted from the call's start, applies again to the
// response the redirect leads to, and a provider silent there is an unknown
// outcome, as before.
//
// The deadline passes when the test says: once the request the redirect led
// to has reached the provider (its handler), the test checks that the
// deadline runs again and makes it pass (firstByteDue), then ends the total
// deadline (endableTotals) so that a call the first-byte deadline did not cut
// ends at once, as the stream_timeout of a call whose response began. A real
// 300 ms first-byte deadline passed before the redirect's first byte on a
// loaded machine, and the test passed whatever a redirect did to it.
func TestFirstByteDeadlineAfterRedirect(t *testing.T) {
	d := Deadlines{FirstByte: time.Hour, Total: 2 * time.Hour}
	for _, a := range deadlineAdapters {
		// Streamed only: a non-streamed call has no first-byte deadline (its
		// first byte comes with the whole answer: unstreamedDeadlines).
		for _, stream := range []bool{true} {
			t.Run(a.name+"/stream="+boolWord(stream), func(t *testing.T) {
				t.Parallel()
				ctx, endTotal := endableTotals(t, context.Background())
				watched := make(chan *CallWatch, 4)
				ctx = context.WithValue(ctx, watchedKey{}, func(w *CallWatch) { watched <- w })
				var (
					once    sync.Once
					running atomic.Bool // the deadline ran again after the redirect
				)
				srv := newFakeServer(t, nil)
				release := releaseAtCleanup(t)
				srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !strings.HasPrefix(r.URL.Path, "/moved/") {
						http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
						return
					}
					once.Do(func() {
						// The client follows a redirect once the transport
						// has returned it, after Redirected.
						cw := <-watched
						cw.mu.Lock()
						running.Store(cw.first != nil && cw.first.Stop())
						cw.mu.Unlock()
						cw.firstByteDue() // cuts the call, unknown, unless the redirect's byte still counts
						endTotal()        // ends, as stream_timeout, a call it did not cut
					})
					blockHandler(release)(w, r)
				})
				e, hooked := callForDeadline(t, ctx, a.new(t, srv.URL, d, stream), stream)
				if !running.Load() {
					t.Errorf("the first-byte deadline was not running after the redirect: the redirect's first byte stopped it for good")
				}
				if e.Kind != KindTimeout || e.Received || !e.OutcomeUnknown {
					t.Fatalf("got %s received=%v unknown=%v, want %s, not received, unknown (%v)",
						e.Kind, e.Received, e.OutcomeUnknown, KindTimeout, e)
				}
				if !strings.Contains(e.Message, "first_byte_timeout") {
					t.Errorf("message %q does not name first_byte_timeout", e.Message)
				}
				if hooked {
					t.Error("the first-byte hooks ran on the redirect")
				}
			})
		}
	}
}

// callForDeadline makes one call with ctx that must fail, with first-byte
// hooks set; it returns the *Error and whether the hooks ran.
func callForDeadline(t *testing.T, ctx context.Context, p deadlineCaller, stream bool) (*Error, bool) {
	t.Helper()
	var hooked atomic.Bool
	ctx = OnFirstByte(ctx, func() { hooked.Store(true) })
	var (
		resp *Response
		err  error
	)
	if stream {
		resp, err = p.CompleteStream(ctx, testRequest(), nil)
	} else {
		resp, err = p.Complete(ctx, testRequest())
	}
	var e *Error
	if resp != nil || !errors.As(err, &e) {
		t.Fatalf("got %+v, %v; want an *Error", resp, err)
	}
	return e, hooked.Load()
}

func boolWord(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
