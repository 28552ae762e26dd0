package race_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// hedgeSignals is an Observer that signals each hedge held because the
// attempt in flight had begun answering (race.HedgeHeldObserver) and each
// hedge the budget denied, without blocking.
type hedgeSignals struct {
	nop
	held, denied chan struct{}
}

func (h *hedgeSignals) HedgeHeld(string)   { signal(h.held) }
func (h *hedgeSignals) HedgeDenied(string) { signal(h.denied) }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// firstByteSignal wraps an adapter and closes seen when a call's first
// response byte is reported. Its hook is set on the router's call context,
// so the router's own hooks run before it: once seen is closed, the router
// knows the call has begun answering.
type firstByteSignal struct {
	providers.Provider
	once sync.Once
	seen chan struct{}
}

func (s *firstByteSignal) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	ctx = providers.OnFirstByte(ctx, func() { s.once.Do(func() { close(s.seen) }) })
	return s.Provider.Complete(ctx, req)
}

// streamChunk is one OpenAI chat.completion.chunk event.
func streamChunk(content, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	c, _ := json.Marshal(content)
	return fmt.Sprintf("data: {\"id\":\"chatcmpl-s\",\"object\":\"chat.completion.chunk\",\"created\":1700000001,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":%s}]}\n\n", c, fr)
}

// openAIStreaming is an OpenAI-compatible adapter (streaming) on an httptest
// server whose handler answers each call as serve says; it is closed when t
// ends, after the runner has stopped.
func openAIStreaming(t *testing.T, serve func(call int, w http.ResponseWriter, r *http.Request)) providers.Provider {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The whole body read, the server watches the connection: the
		// request's context ends when the router cancels the call.
		io.Copy(io.Discard, r.Body)
		serve(int(calls.Add(1)), w, r)
	}))
	t.Cleanup(srv.Close)
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "gpt-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// SPEC §6.4, §15: a hedge is for an attempt that has produced no response
// byte by the hedge delay. A primary that begins streaming before the delay
// and finishes long after it is not hedged: its stream is watched by
// stream_idle_timeout and timeout instead. (Found in review: any attempt
// without a whole answer by the delay was hedged, so a healthy primary
// streaming a long answer cost a second provider call on every job.)
//
// Without timing: the hedge budget (one hedge in flight) is held by another
// job's hedge, so each time the hedge comes due it is denied and tried again
// a delay later — until the router knows of the primary's first byte, when
// it is held instead. A denial decided just before that may still be on its
// way; a second one would be a hedge tried for an attempt known to be
// streaming.
func TestHedgeNotStartedForAPrimaryThatIsStreaming(t *testing.T) {
	finish := make(chan struct{}) // the streaming primary sends the rest of its answer
	firstCalled := make(chan struct{})
	primary := &firstByteSignal{seen: make(chan struct{}), Provider: openAIStreaming(t, func(call int, w http.ResponseWriter, r *http.Request) {
		if call == 1 { // the first job's primary: accepted, never answered
			close(firstCalled)
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		half := len(racetest.ValidTriage) / 2
		fmt.Fprint(w, streamChunk(racetest.ValidTriage[:half], ""))
		w.(http.Flusher).Flush()
		select {
		case <-finish:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, streamChunk(racetest.ValidTriage[half:], "stop"), "data: [DONE]\n\n")
	})}
	budgetHeld, freeBudget := make(chan struct{}), make(chan struct{})
	obs := &hedgeSignals{held: make(chan struct{}, 1), denied: make(chan struct{}, 1024)}
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: time.Millisecond, HedgeBudgetMin: 1}, Observer: obs,
		Providers: []racetest.Provider{
			{Name: "primary", Adapter: primary},
			{Name: "fallback", Respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 { // the first job's hedge holds the budget
					close(budgetHeld)
					<-freeBudget
				}
				return providers.Step{Output: racetest.ValidTriage}
			}},
		}})
	// Run before the runner stops and the server closes, so that nothing
	// waits on them then.
	finishStream, release := sync.OnceFunc(func() { close(finish) }), sync.OnceFunc(func() { close(freeBudget) })
	t.Cleanup(func() { finishStream(); release() })

	first := b.Submit(t)
	<-budgetHeld
	// Calls are numbered as they reach the server: the second job is sent
	// only once the first job's primary is call 1. (Its hedge can come first:
	// it is due a millisecond after the attempt starts, and the scripted
	// fallback answers in process. Had the second job's primary taken call 1
	// under load, the first job's would stream and the silent second job
	// would be denied its hedge again and again: the test failed, now and
	// then.)
	<-firstCalled
	streaming := b.Submit(t)
	<-primary.seen // the router knows the primary has begun answering
	for drained := false; !drained; {
		select {
		case <-obs.denied:
		default:
			drained = true
		}
	}
	for late := 0; ; {
		select {
		case <-obs.held:
		case <-obs.denied:
			if late++; late < 2 {
				continue
			}
			t.Fatal("a hedge was tried for a primary known to be streaming its answer")
		}
		break
	}
	release()
	if j := b.WaitSettled(t, first.ID); j.State != store.JobSucceeded {
		t.Fatalf("the first job %s: %+v", j.State, j.Attempts)
	}
	finishStream()
	j := b.WaitSettled(t, streaming.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" || j.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s attempts %+v: want the streaming primary alone, won", j.State, j.Attempts)
	}
}

// The other half of the rule: an OpenAI-compatible primary that accepts the
// request and sends no byte is still hedged after the delay, and the hedge
// wins; the silent primary is cancelled.
func TestHedgeStartedForAPrimaryWithNoFirstByte(t *testing.T) {
	primary := openAIStreaming(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: time.Millisecond},
		Providers: []racetest.Provider{
			{Name: "primary", Adapter: primary},
			{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
		}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	b.Stop()
	j = b.Job(t, j.ID)
	fb, p := racetest.AttemptOn(j, "fallback"), racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || fb == nil || fb.Role != store.RoleHedge || fb.State != store.AttemptWon {
		t.Fatalf("job %s attempts %+v: want the hedge on the fallback to win", j.State, j.Attempts)
	}
	if p.State != store.AttemptCancelled {
		t.Fatalf("silent primary %s, want cancelled", p.State)
	}
}

// bodyReadSignal is a transport that closes read when the body of a response
// carrying the header X-Signal-Read is first read: the adapter's transport
// has then seen the response's headers (it reports them before handing the
// body on).
type bodyReadSignal struct {
	next http.RoundTripper
	once sync.Once
	read chan struct{}
}

func (s *bodyReadSignal) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil && resp.Header.Get("X-Signal-Read") != "" {
		resp.Body = &signalledBody{ReadCloser: resp.Body, first: func() { s.once.Do(func() { close(s.read) }) }}
	}
	return resp, err
}

type signalledBody struct {
	io.ReadCloser
	first func()
}

func (b *signalledBody) Read(p []byte) (int, error) {
	b.first()
	return b.ReadCloser.Read(p)
}

// A primary that sends its stream's headers at once and then only keep-alive
// comments (OpenRouter, vLLM behind uvicorn, another router) has not begun
// answering: it is hedged after the delay like a silent one, and the hedge
// wins. (Found by review: its headers held the hedge for good, and the job
// waited for the primary's stream_idle_timeout or timeout, then failed over.)
//
// Without timing, as in TestHedgeNotStartedForAPrimaryThatIsStreaming: the
// hedge budget (one hedge in flight) is held by another job's hedge until
// the router has read the primary's headers and comment, so every hedge that
// comes due before then is denied; the one after is the rule under test.
func TestHedgeStartedForAPrimaryThatSentOnlyHeadersAndComments(t *testing.T) {
	var calls atomic.Int64
	firstCalled := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if calls.Add(1) == 1 { // the first job's primary: accepted, never answered
			close(firstCalled)
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Signal-Read", "1")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, ": PROCESSING\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	tr := &bodyReadSignal{next: http.DefaultTransport, read: make(chan struct{})}
	primary, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: srv.URL + "/v1", APIKey: "sk-test",
		Model: "gpt-test", Stream: true, StreamIdleTimeout: 5 * time.Second, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	budgetHeld, freeBudget := make(chan struct{}), make(chan struct{})
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: time.Millisecond, HedgeBudgetMin: 1},
		Providers: []racetest.Provider{
			{Name: "primary", Adapter: primary},
			{Name: "fallback", Respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 { // the first job's hedge holds the budget
					close(budgetHeld)
					<-freeBudget
				}
				return providers.Step{Output: racetest.ValidTriage}
			}},
		}})
	release := sync.OnceFunc(func() { close(freeBudget) })
	t.Cleanup(release)

	first := b.Submit(t)
	<-budgetHeld
	<-firstCalled // the second job's primary is call 2
	second := b.Submit(t)
	<-tr.read // the router has the primary's headers and reads its body
	release()
	if j := b.WaitSettled(t, first.ID); j.State != store.JobSucceeded {
		t.Fatalf("the first job %s: %+v", j.State, j.Attempts)
	}
	j := b.WaitSettled(t, second.ID)
	b.Stop()
	j = b.Job(t, j.ID)
	fb, p := racetest.AttemptOn(j, "fallback"), racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || fb == nil || fb.Role != store.RoleHedge || fb.State != store.AttemptWon {
		t.Fatalf("job %s attempts %+v: want the hedge on the fallback to win", j.State, j.Attempts)
	}
	if p.State != store.AttemptCancelled {
		t.Fatalf("primary %s (%s), want cancelled by the hedge's win", p.State, p.Error)
	}
}
