package providers

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// deadlineAdapter is one HTTP adapter under the deadline scenarios of SPEC §15,
// with its fake provider.
type deadlineAdapter struct {
	name string
	new  func(t *testing.T, baseURL string, d Deadlines, stream bool) deadlineCaller
	// answerThenBlock starts the adapter's fake provider: on a streamed request
	// it sends its headers and a first text delta, then nothing more until the
	// client goes away or the test ends.
	answerThenBlock func(t *testing.T) string
}

type deadlineCaller interface {
	Provider
	Streamer
}

var deadlineAdapters = []deadlineAdapter{
	{
		name: "openai",
		new: func(t *testing.T, url string, d Deadlines, stream bool) deadlineCaller {
			return newTestAdapter(t, url, func(c *OpenAIConfig) {
				c.FirstByteTimeout, c.StreamIdleTimeout, c.Timeout, c.Stream = d.FirstByte, d.Idle, d.Total, stream
			})
		},
		answerThenBlock: func(t *testing.T) string { return blockingStreamServer(t, chunk(`{"a":`, "")) },
	},
	{
		name: "anthropic",
		new: func(t *testing.T, url string, d Deadlines, stream bool) deadlineCaller {
			return newAnthropicAdapter(t, url, func(c *AnthropicConfig) {
				c.FirstByteTimeout, c.StreamIdleTimeout, c.Timeout, c.Stream = d.FirstByte, d.Idle, d.Total, stream
			})
		},
		answerThenBlock: func(t *testing.T) string {
			return anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: `{"a":1}`, BlockAfter: true})).URL
		},
	},
}

// silentServer accepts a request, calls onRequest (may be nil) and answers
// nothing (not even headers) until the client goes away or the test ends.
func silentServer(t *testing.T, onRequest func()) string {
	srv := newFakeServer(t, nil)
	release := releaseAtCleanup(t)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if onRequest != nil {
			onRequest()
		}
		blockHandler(release)(w, r)
	})
	return srv.URL
}

// headersThenBlock answers 200 with JSON headers, then sends no body until the
// client goes away or the test ends (a non-streamed answer that never arrives
// whole).
func headersThenBlock(t *testing.T) string {
	srv := newFakeServer(t, nil)
	release := releaseAtCleanup(t)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		blockHandler(release)(w, r)
	})
	return srv.URL
}

// Every adapter applies the deadlines of SPEC §15 alike (they share
// CallWatch): no response byte when a deadline fires is an unknown outcome;
// bytes, then a stall, a cut or the total deadline is a known failure marked
// Received. The total deadline after bytes is stream_timeout for both (the
// Anthropic adapter once said timeout there).
func TestDeadlinesAgreeAcrossAdapters(t *testing.T) {
	const (
		silent  = "silent"  // no byte at all
		headers = "headers" // headers, then no body
		answer  = "answer"  // headers and a first delta, then nothing

		endOnceSent    = "sent"      // totalEndsOnceSent
		endAtFirstByte = "answering" // totalEndsAtFirstByte
	)
	rows := []struct {
		name   string
		server string
		d      Deadlines
		stream bool
		// cancel: the caller cancels once the server has the request (silent)
		// or once the first delta arrived (answer).
		cancel bool
		// endTotal: when the test makes the total deadline pass
		// (endableTotals): once the request was sent (endOnceSent) or once
		// the provider began answering (endAtFirstByte); "": after d.Total.
		endTotal string
		kind     Kind
		received bool
		unknown  bool
	}{
		// The first-byte deadline passes once the request was sent
		// (firstByteOnceSent), and the total deadline once the request was
		// sent or once the provider began answering (endableTotals), not
		// after a wait a loaded machine may spend connecting.
		{"first byte never comes/stream", silent, Deadlines{FirstByte: time.Hour, Total: 2 * time.Hour}, true, false, "", KindTimeout, false, true},
		{"total deadline before any byte/stream", silent, Deadlines{Total: 2 * time.Hour}, true, false, endOnceSent, KindTimeout, false, true},
		{"total deadline before any byte/complete", silent, Deadlines{Total: 2 * time.Hour}, false, false, endOnceSent, KindTimeout, false, true},
		{"bytes then stall", answer, Deadlines{Idle: 50 * time.Millisecond, Total: time.Minute}, true, false, "", KindStreamStalled, true, false},
		{"bytes then total deadline", answer, Deadlines{Total: 2 * time.Hour}, true, false, endAtFirstByte, KindStreamTimeout, true, false},
		{"headers then total deadline/complete", headers, Deadlines{Total: 2 * time.Hour}, false, false, endAtFirstByte, KindStreamTimeout, true, false},
		{"cancelled before any byte", silent, Deadlines{Total: time.Minute}, true, true, "", KindCancelled, false, false},
		{"cancelled after bytes", answer, Deadlines{Total: time.Minute}, true, true, "", KindCancelled, true, false},
	}
	for _, a := range deadlineAdapters {
		for _, r := range rows {
			t.Run(a.name+"/"+r.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if r.d.FirstByte > 0 {
					ctx = firstByteOnceSent(t, ctx)
				}
				switch r.endTotal {
				case endOnceSent:
					ctx = totalEndsOnceSent(t, ctx)
				case endAtFirstByte:
					ctx = totalEndsAtFirstByte(t, ctx)
				}
				var once sync.Once
				var onRequest func()
				var onDelta func(string)
				if r.cancel {
					onRequest = func() { once.Do(cancel) }
					onDelta = func(string) { once.Do(cancel) }
				}
				var url string
				switch r.server {
				case silent:
					url = silentServer(t, onRequest)
				case headers:
					url = headersThenBlock(t)
				case answer:
					url = a.answerThenBlock(t)
				}
				p := a.new(t, url, r.d, r.stream)
				var (
					resp *Response
					err  error
				)
				if r.stream {
					resp, err = p.CompleteStream(ctx, testRequest(), onDelta)
				} else {
					resp, err = p.Complete(ctx, testRequest())
				}
				var e *Error
				if resp != nil || !errors.As(err, &e) {
					t.Fatalf("got %+v, %v; want an *Error", resp, err)
				}
				if e.Kind != r.kind || e.Received != r.received || e.OutcomeUnknown != r.unknown {
					t.Fatalf("got %s received=%v unknown=%v, want %s received=%v unknown=%v (%v)",
						e.Kind, e.Received, e.OutcomeUnknown, r.kind, r.received, r.unknown, e)
				}
			})
		}
	}
}

// Both adapters report the time to first byte of a whole answer, streamed or
// not: adaptive hedging learns each target's from it (without it the whole
// latency stood in for an Anthropic target's).
func TestFirstByteReportedByBothAdapters(t *testing.T) {
	for _, stream := range []bool{true, false} {
		oa := newTestAdapter(t, newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			if stream {
				startStream(w)
				sse(w, chunk(`{"a":1}`, ""), chunk("", "stop"), "[DONE]")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(completionBody))
		}).URL, func(c *OpenAIConfig) { c.Stream = stream })
		an := newAnthropicAdapter(t, anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: `{"a":1}`})).URL,
			func(c *AnthropicConfig) { c.Stream = stream })
		for _, p := range []interface {
			Provider
			Streamer
		}{oa, an} {
			call := p.Complete
			if stream {
				call = func(ctx context.Context, req *Request) (*Response, error) { return p.CompleteStream(ctx, req, nil) }
			}
			resp, err := call(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("%s stream=%v: %v", p.Name(), stream, err)
			}
			if resp.FirstByte <= 0 {
				t.Errorf("%s stream=%v: no time to first byte in the response", p.Name(), stream)
			}
		}
	}
}
