package conformance_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// An interrupted run (Ctrl-C, a CI timeout's SIGTERM) gives up the provider
// call it has in flight before it returns: the connection carrying the
// request is closed by the time Run returns, and the provider sees the
// request cancelled. A call left running past the run (a detached goroutine,
// a context that does not end with the run's) would keep the provider working,
// and billing, for a run that has already reported, and leave a goroutine of
// the run behind. Held both before the response's headers and mid-stream, with
// the real OpenAI adapter over HTTP. Found by review.
func TestInterruptedRunCancelsItsProviderCallInFlight(t *testing.T) {
	for _, c := range []struct {
		name      string
		stream    bool
		midStream bool // the server sends the headers and a first chunk, then holds
	}{
		{"not streamed", false, false},
		{"streamed, before the headers", true, false},
		{"streamed, mid-stream", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			held := newHeldOpenAI(t, c.midStream)
			conns := &connLog{}
			p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "held", BaseURL: held.srv.URL + "/v1", APIKey: "sk-test",
				Model: "gpt-4o-mini", Stream: c.stream, HTTPClient: conns.client()})
			if err != nil {
				t.Fatal(err)
			}
			// No deadline of the call's own that would end it in time: a run
			// that lost the interruption hangs here (go test -timeout reports
			// it) instead of passing late.
			targets := map[string]*race.Target{"held": {Provider: p, Model: "gpt-4o-mini", ContextWindow: 128000, Stream: c.stream, Timeout: 24 * time.Hour}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-held.arrived
				cancel() // the signal comes while the first case's call is held
			}()
			rep, err := conformance.Run(ctx, conformance.Options{Targets: targets, Prompts: e.prompts, Suites: e.suites,
				PromptNames: []string{"triage"}, RouterVersion: "test"})
			open := conns.open() // as Run returns
			if err == nil || rep == nil || !rep.Interrupted {
				t.Fatalf("Run = %v; want it interrupted", err)
			}
			if open != 0 {
				t.Fatalf("%d connection(s) to the provider still open when the interrupted run returned: its call in flight was not given up", open)
			}
			// The provider sees it: its handler's request context ends.
			<-held.cancelled
			if n := held.count(); n != 1 {
				t.Fatalf("%d requests reached the provider; want the first case's only (the run stops at the interruption)", n)
			}
		})
	}
}

// A run that ends normally does not leave behind a call it gave up: a case
// whose call its deadline (the target's timeout) cut fails, the run goes on to
// the next case and, when it returns, has closed the connection of every call
// it made. The provider here never answers, so every case is cut.
func TestFinishedRunLeavesNoCallInFlight(t *testing.T) {
	e := newEnv(t)
	held := newHeldOpenAI(t, false)
	conns := &connLog{}
	hc := conns.client()
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "held", BaseURL: held.srv.URL + "/v1", APIKey: "sk-test",
		Model: "gpt-4o-mini", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	// The timeout only decides when each held call is cut, never whether.
	targets := map[string]*race.Target{"held": {Provider: p, Model: "gpt-4o-mini", ContextWindow: 128000, Timeout: 100 * time.Millisecond}}
	rep, err := conformance.Run(context.Background(), conformance.Options{Targets: targets, Prompts: e.prompts, Suites: e.suites,
		PromptNames: []string{"triage"}, RouterVersion: "test"})
	// A connection dialled for a call cut before it was sent waits idle in
	// the pool, carrying nothing: not a call in flight.
	hc.CloseIdleConnections()
	open := conns.open()
	if err != nil || rep.Interrupted || len(rep.Results) != 1 || rep.Results[0].CasesPassed != 0 ||
		len(rep.Results[0].Cases) != rep.Results[0].CasesTotal {
		t.Fatalf("Run = %v, interrupted=%v, %d results; want one finished result whose every case failed", err, rep.Interrupted, len(rep.Results))
	}
	for _, c := range rep.Results[0].Cases {
		if c.Stage != conformance.StageProvider || c.Failures[0].Rule != "provider."+string(providers.KindTimeout) {
			t.Fatalf("case %s: %+v; want it cut by the target's timeout", c.Name, c)
		}
	}
	if open != 0 {
		t.Fatalf("%d connection(s) to the provider still open when the run returned: a call it gave up is still in flight", open)
	}
}

// heldOpenAI is an OpenAI-compatible server that holds every chat completion
// until the client gives it up (its request context ends), and reports that.
type heldOpenAI struct {
	srv       *httptest.Server
	arrived   chan struct{} // closed when the first request arrives
	cancelled chan struct{} // a value for each request the client gave up
	release   chan struct{} // closed at cleanup: a request the client never gave up ends anyway

	mu       sync.Mutex
	requests int
}

func newHeldOpenAI(t *testing.T, midStream bool) *heldOpenAI {
	h := &heldOpenAI{arrived: make(chan struct{}), cancelled: make(chan struct{}, 64), release: make(chan struct{})}
	var once sync.Once
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// net/http notices a client that hung up only once the request's
		// body has been read (it watches the connection from then on).
		_, _ = io.Copy(io.Discard, r.Body)
		h.mu.Lock()
		h.requests++
		h.mu.Unlock()
		if midStream {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"{"},"finish_reason":null}]}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		once.Do(func() { close(h.arrived) })
		select {
		case <-r.Context().Done():
			h.cancelled <- struct{}{}
		case <-h.release:
		}
	}))
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() { close(h.release) }) // before Close, which waits for the handlers
	return h
}

func (h *heldOpenAI) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}

// connLog counts the client's connections that are open: an http.Client
// whose connections it watches (client).
type connLog struct {
	mu sync.Mutex
	n  int
}

func (l *connLog) client() *http.Client {
	tr := providers.NewTransport(0)
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
		return &loggedConn{Conn: c, log: l}, nil
	}
	return &http.Client{Transport: tr}
}

func (l *connLog) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

type loggedConn struct {
	net.Conn
	log  *connLog
	once sync.Once
}

// Close counts the connection closed before closing it: the transport's
// Close of a cancelled request's connection is what unblocks the call, so it
// is counted before the call returns.
func (c *loggedConn) Close() error {
	c.once.Do(func() {
		c.log.mu.Lock()
		c.log.n--
		c.log.mu.Unlock()
	})
	return c.Conn.Close()
}
