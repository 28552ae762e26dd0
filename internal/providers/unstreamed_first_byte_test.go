package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// watchCalls is a context whose calls show the test each CallWatch they
// start, on the returned channel.
func watchCalls() (context.Context, <-chan *CallWatch) {
	ch := make(chan *CallWatch, 4)
	return context.WithValue(context.Background(), watchedKey{}, func(w *CallWatch) { ch <- w }), ch
}

// fireFirstByte makes the first-byte deadline of the call w watches pass now,
// when the adapter gave the call one, and returns once it has acted: the
// call's context has ended, as it does when no response byte came in time.
// It reports whether there was such a deadline.
func fireFirstByte(w *CallWatch) bool {
	w.mu.Lock()
	first := w.first
	if first != nil {
		first.Reset(0)
	}
	w.mu.Unlock()
	if first == nil {
		return false
	}
	<-w.ctx.Done()
	return true
}

// A call that is not streamed gets its response's first byte only once the
// provider has generated the whole answer: a first_byte_timeout on it bounded
// the generation, and every answer slower than it (30 s by default) became
// `unknown` — a 504 outcome_unknown and a job blocked until an operator
// resolved it — although the provider was answering as asked. Only the
// call's timeout bounds it now; a streamed call keeps its first-byte
// deadline. Both adapters. Found by review (rchat2 #1).
//
// The server holds its answer until the test has made the call's first-byte
// deadline pass (fireFirstByte), if the adapter gave it one: no wait.
func TestUnstreamedCallOutlastsFirstByteTimeout(t *testing.T) {
	const firstByte, total = time.Hour, 2 * time.Hour
	adapters := map[string]func(t *testing.T, generate func()) deadlineCaller{
		"openai": func(t *testing.T, generate func()) deadlineCaller {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				generate()
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, completionBody)
			})
			return newTestAdapter(t, srv.URL, func(c *OpenAIConfig) {
				c.FirstByteTimeout, c.Timeout, c.Stream = firstByte, total, false
			})
		},
		"anthropic": func(t *testing.T, generate func()) deadlineCaller {
			srv := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
				generate()
				return anthropicfake.Reply{Text: `{"a":1}`, InputTokens: 3, OutputTokens: 5}
			})
			return newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) {
				c.FirstByteTimeout, c.Timeout, c.Stream = firstByte, total, false
			})
		},
	}
	for name, newP := range adapters {
		t.Run(name, func(t *testing.T) {
			ctx, watched := watchCalls()
			fired := make(chan bool, 1)
			p := newP(t, func() { fired <- fireFirstByte(<-watched) })
			resp, err := p.Complete(ctx, testRequest())
			if <-fired {
				t.Errorf("the non-streamed call was given a first-byte deadline (first_byte_timeout %s): its first byte comes only with the whole answer", firstByte)
			}
			if err != nil {
				t.Fatalf("a non-streamed answer generated past first_byte_timeout but within timeout failed: %v", err)
			}
			if resp.Content != `{"a":1}` {
				t.Errorf("content %q", resp.Content)
			}
		})
	}
}

// The deadlines each adapter gives a call: a non-streamed one only its
// timeout (a call that gets no byte within it is still `unknown`, SPEC
// §6.7); a streamed one all three, as before.
func TestAdaptersCallDeadlines(t *testing.T) {
	const firstByte, idle, total = time.Hour, 30 * time.Minute, 2 * time.Hour
	openAIServer := func(t *testing.T) string {
		return newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			var body struct {
				Stream bool `json:"stream"`
			}
			_ = json.Unmarshal(raw, &body)
			if body.Stream {
				startStream(w)
				sse(w, chunk(`{"a":1}`, ""), chunk("", "stop"), "[DONE]")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, completionBody)
		}).URL
	}
	anthropicServer := func(t *testing.T) string {
		return anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: `{"a":1}`, InputTokens: 3, OutputTokens: 5})).URL
	}
	for _, a := range deadlineAdapters {
		for _, stream := range []bool{false, true} {
			url := openAIServer(t)
			if a.name == "anthropic" {
				url = anthropicServer(t)
			}
			p := a.new(t, url, Deadlines{FirstByte: firstByte, Idle: idle, Total: total}, stream)
			ctx, watched := watchCalls()
			var err error
			if stream {
				_, err = p.CompleteStream(ctx, testRequest(), nil)
			} else {
				_, err = p.Complete(ctx, testRequest())
			}
			if err != nil {
				t.Fatalf("%s stream=%v: %v", a.name, stream, err)
			}
			want := Deadlines{Total: total}
			if stream {
				want = Deadlines{FirstByte: firstByte, Idle: idle, Total: total, Stream: true}
			}
			if got := (<-watched).d; got != want {
				t.Errorf("%s stream=%v: deadlines %+v, want %+v", a.name, stream, got, want)
			}
		}
	}
}
