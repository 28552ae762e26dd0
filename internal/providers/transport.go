package providers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// callTrace records, for one adapter call, what the HTTP layer saw that go-openai
// does not pass on: whether a connection was made (so a timeout before any
// connection is known not to have reached the provider) and the Retry-After of an
// error response. One callTrace belongs to one call; it travels in the request's
// context, so concurrent calls on one client never share it.
type callTrace struct {
	mu        sync.Mutex
	connected bool
	// wrote: the request (the last one, after any redirect) was written
	// whole, body and all (httptrace's WroteRequest without an error), or
	// a response to it came. Before that the provider cannot have
	// processed it: a deadline or a cancellation then leaves no unknown
	// outcome (unsent).
	wrote      bool
	status     int
	retryAfter time.Duration
	// header is the headers of the last response that was not a redirect
	// (nil: none yet, or the last was a redirect, whose id is not the
	// request that answered, or failed): providerRequestID reads the
	// provider's id of the request from them only when a call failed.
	header http.Header
	// onResponse (may be nil) is called when response bytes arrive: the
	// headers of a response the client will not follow as a redirect, then
	// each read of its body that returns bytes. Any byte is a sign of life:
	// an SSE comment a provider sends to keep the connection open while its
	// model works (OpenRouter's ": OPENROUTER PROCESSING", Anthropic's ping
	// events, another router's ": waiting…") is one as much as a chunk is.
	onResponse func()
	// watch (may be nil) is the call's CallWatch: the transport reports to
	// it the first byte of each response (ResponseStarted), before its
	// headers are whole, and the redirects (Redirected).
	watch *CallWatch
	// interims counts the interim (1xx) responses of the call
	// (interimResponse).
	interims int
	// body, when set, is the request body the adapter wrote itself (see
	// openai_body.go): the transport sends it in place of go-openai's.
	body []byte
	// sse is set for a streamed OpenAI-compatible call: the body of a 2xx
	// response is read through sseFilter. Set before the request is sent.
	sse bool
	// answer is the kind of answer the call expects, whose 2xx response
	// must not be a web page (notTheAnswer). Set by expect before the
	// request is sent; answerAny is not checked.
	answer   answerType
	provider string // the adapter's name, for notTheAnswer's error
	// keepAnswer is set for a non-streamed OpenAI-compatible call: the body
	// of its 2xx answer is kept as it is read (answerTap, in kept). Set
	// before the request is sent.
	keepAnswer bool
	kept       *answerTap
	// rawInputs is set for a non-streamed Anthropic call: the SDK keeps
	// each tool_use block's input as the raw JSON it came as, so the
	// arrays the model wrote in it are not bounded (arrayGuard).
	rawInputs bool
	// filter is the sseFilter the body of a 2xx answer to an sse call is
	// read through.
	filter *sseFilter
	// model is the model the call sends (wire), for the messages that name
	// it (routeNotFound).
	model string
}

type callTraceKey struct{}

// withCallTrace attaches a new callTrace to ctx; w (may be nil) is the call's
// CallWatch, told when response bytes arrive (callTrace.onResponse,
// callTrace.watch).
func withCallTrace(ctx context.Context, w *CallWatch) (context.Context, *callTrace) {
	t := &callTrace{}
	if w != nil {
		t.onResponse, t.watch = w.Received, w
	}
	return context.WithValue(ctx, callTraceKey{}, t), t
}

// maxInterimResponses bounds the interim (1xx) responses of one call: a
// provider sends one 100 Continue, or a 103 Early Hints or two; one that
// sends them on and on never answers. net/http bounds them by their size
// only while no Got1xxResponse hook watches them.
const maxInterimResponses = 16

// interimResponse is the call's httptrace Got1xxResponse: each interim
// response is a response byte (ResponseStarted, as the first one's
// GotFirstResponseByte already said), and one past maxInterimResponses ends
// the call as a failure with a known outcome.
func (t *callTrace) interimResponse(code int, _ textproto.MIMEHeader) error {
	t.mu.Lock()
	t.interims++
	n := t.interims
	t.mu.Unlock()
	if t.watch != nil {
		t.watch.ResponseStarted()
	}
	if n <= maxInterimResponses {
		return nil
	}
	kind := KindMalformedResponse
	if t.answer == answerSSE {
		kind = KindStreamMalformed
	}
	e := NewError(t.provider, kind, fmt.Sprintf("the provider sent more than %d interim responses (the last HTTP %d) and no final one: "+
		"the provider, or a proxy in front of it, is not answering the request: check its status and logs", maxInterimResponses, code))
	e.Received = true
	return e
}

func (t *callTrace) gotConn() {
	t.mu.Lock()
	t.connected = true
	t.mu.Unlock()
}

// sending records that a request of the call is about to be sent: it has
// not been written yet (a redirect's next request, too).
func (t *callTrace) sending() {
	t.mu.Lock()
	t.wrote = false
	t.mu.Unlock()
}

// wroteRequest is the call's httptrace WroteRequest: a request written
// whole is one the provider may process.
func (t *callTrace) wroteRequest(info httptrace.WroteRequestInfo) {
	if info.Err != nil {
		return
	}
	t.mu.Lock()
	t.wrote = true
	t.mu.Unlock()
}

// unsent marks e, the error of the call, when the call ended — a deadline
// or a cancellation — before its request was written whole: the provider
// cannot have processed a request it did not have all of (a server reads
// the whole body before it decodes it), so the outcome is not unknown and
// NotSent is set, whether a connection was made or not. A request written
// whole and no response byte after it stays unknown (SPEC §6.7).
func (t *callTrace) unsent(e *Error) {
	t.mu.Lock()
	connected, wrote := t.connected, t.wrote
	t.mu.Unlock()
	if wrote || e.Received || (e.Kind != KindTimeout && e.Kind != KindCancelled) {
		return
	}
	e.NotSent = true
	if e.Kind != KindTimeout {
		return
	}
	e.OutcomeUnknown = false
	if !connected {
		e.Message = "deadline passed before a connection was made: the request was not sent"
		return
	}
	e.Message = "deadline passed while the request was still being sent (the connection was made, the provider did not read all of it): " +
		"the request was not processed; if it recurs, the provider, or a proxy in front of it, is not reading requests: check its status and logs"
}

func (t *callTrace) response(resp *http.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.connected = true
	t.wrote = true // answered: the provider had it (an early answer ends the sending)
	t.status = resp.StatusCode
	t.header = nil
	if !isRedirect(resp) {
		t.header = resp.Header
	}
	t.retryAfter = 0
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		t.retryAfter = ParseRetryAfter(resp.StatusCode, resp.Header, time.Now())
	}
}

// expect says what the 2xx answer of provider's call must be (notTheAnswer).
// Called before the request is sent.
func (t *callTrace) expect(provider string, want answerType) {
	t.provider, t.answer = provider, want
}

// streamErrLine is the payload of the error event an sse call's stream held
// that go-openai could not decode (errTap), or nil.
func (t *callTrace) streamErrLine() []byte {
	t.mu.Lock()
	f := t.filter
	t.mu.Unlock()
	if f == nil {
		return nil
	}
	return f.tap.errLine()
}

// streamDone reports whether an sse call's stream sent [DONE] (doneTap).
func (t *callTrace) streamDone() bool {
	t.mu.Lock()
	f := t.filter
	t.mu.Unlock()
	return f != nil && f.done.sent()
}

// streamPlainBody is the body of an sse call's 2xx answer when it held no
// data line at all (plainTap), or nil.
func (t *callTrace) streamPlainBody() []byte {
	t.mu.Lock()
	f := t.filter
	t.mu.Unlock()
	if f == nil {
		return nil
	}
	return f.plain.plain()
}

// result returns whether a connection was made, the last response status (0:
// none) and the recorded Retry-After.
func (t *callTrace) result() (connected bool, status int, retryAfter time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.connected, t.status, t.retryAfter
}

// providerRequestID is the provider's id of the request the call's response
// named, or "" (no response yet, or it said none).
func (t *callTrace) providerRequestID() string {
	t.mu.Lock()
	h := t.header
	t.mu.Unlock()
	return responseRequestID(h)
}

// noteRequestID gives the *Error in err's chain the provider's id of the
// request the call's response named, if one did (Error.withRequestID): an
// error status's, or an answer's that then broke off or reported an error.
func (t *callTrace) noteRequestID(err error) {
	if e, ok := AsError(err); ok {
		e.withRequestID(t.providerRequestID())
	}
}

// traceTransport wraps the adapter's RoundTripper to fill the callTrace found in
// the request's context. Requests without one pass through untouched.
type traceTransport struct {
	next  http.RoundTripper
	limit int64 // > 0: every response body is bounded to it (see limitBody)
}

func (tt *traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = withTraceContext(req)
	resp, err := tt.roundTrip(req)
	if resp != nil && resp.Body != nil {
		if tt.limit > 0 {
			resp.Body = &limitedBody{rc: resp.Body, left: tt.limit, limit: tt.limit}
		}
		t, _ := req.Context().Value(callTraceKey{}).(*callTrace)
		if t != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			// Under the taps: whatever part of the answer they keep is
			// bounded as the decoders' is.
			resp.Body = newArrayGuard(resp.Body, tt.limit, t.answer == answerSSE, t.rawInputs)
		}
		// Above the limit and liveBody: the lines the filter drops are
		// bytes received all the same.
		if t != nil && t.sse && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			f := newSSEFilter(resp.Body)
			t.mu.Lock()
			t.filter = f
			t.mu.Unlock()
			resp.Body = f
		} else if t != nil && t.keepAnswer && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			tap := &answerTap{rc: resp.Body}
			if n := resp.ContentLength; n > 0 && (tt.limit <= 0 || n <= tt.limit) {
				tap.body = make([]byte, 0, min(n, maxAnswerPrealloc))
			}
			t.mu.Lock()
			t.kept = tap
			t.mu.Unlock()
			resp.Body = tap
		}
	}
	return resp, err
}

func (tt *traceTransport) roundTrip(req *http.Request) (*http.Response, error) {
	t, _ := req.Context().Value(callTraceKey{}).(*callTrace)
	if t == nil {
		return tt.next.RoundTrip(req)
	}
	t.sending()
	ct := &httptrace.ClientTrace{
		GotConn:      func(httptrace.GotConnInfo) { t.gotConn() },
		WroteRequest: t.wroteRequest,
	}
	if t.watch != nil {
		// The first byte of the status line stops the first-byte
		// deadline, however slowly the headers follow (ResponseStarted).
		ct.GotFirstResponseByte = t.watch.ResponseStarted
		ct.Got1xxResponse = t.interimResponse
	}
	ctx := httptrace.WithClientTrace(req.Context(), ct)
	req = req.WithContext(ctx) // a shallow copy: the caller's request is not modified
	if t.body != nil && req.Body != nil {
		_ = req.Body.Close() // go-openai's encoding of the stand-in
		body := t.body
		req.Body, _ = bodyReader(body)
		req.GetBody = func() (io.ReadCloser, error) { return bodyReader(body) }
		req.ContentLength = int64(len(body))
	}
	resp, err := tt.next.RoundTrip(req)
	err = headersTooLarge(err)
	if resp != nil {
		t.response(resp)
		if t.onResponse != nil && !isRedirect(resp) {
			t.onResponse()
			if resp.Body != nil {
				resp.Body = &liveBody{rc: resp.Body, onBytes: t.onResponse}
			}
		} else if t.watch != nil && isRedirect(resp) {
			t.watch.Redirected()
		}
		if e := switchedProtocols(t.provider, resp); e != nil && err == nil {
			if resp.Body != nil {
				_ = resp.Body.Close() // the detached connection
			}
			return nil, e
		}
		if e := notTheAnswer(t.provider, t.answer, resp); e != nil && err == nil {
			// Not the API's answer: not handed to the client library to
			// decode. The adapters' classify returns e as it is.
			if resp.Body != nil {
				_ = resp.Body.Close()
			}
			return nil, e
		}
		if e := unfollowedRedirect(t.provider, t.answer, resp); e != nil && err == nil {
			// A 3xx the client does not follow: the SDKs would decode it as
			// the answer (they fail only from 400).
			if resp.Body != nil {
				_ = resp.Body.Close()
			}
			return nil, e
		}
		if err == nil {
			labelAnswerJSON(t.answer, resp)
		}
	}
	return resp, err
}

// labelAnswerJSON labels a non-streamed call's 2xx answer application/json
// when its Content-Type is missing or names no JSON (text/plain, a
// gateway's octet-stream): the Anthropic SDK decodes only a body labelled
// JSON, and refused every other one as a destination it cannot fill, so
// a gateway that relabels or drops the Content-Type made every whole
// answer fail. A web page never gets here (notTheAnswer). go-openai
// decodes whatever the label; a body that is not JSON is
// malformed_response either way.
func labelAnswerJSON(want answerType, resp *http.Response) {
	if want != answerJSON || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return
	}
	ct := resp.Header.Get("Content-Type")
	if hasPrefixFold(strings.TrimLeft(ct, " \t"), "application/json") {
		return // every proper answer takes this path: no parse, no allocation
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil &&
		(strings.Contains(mt, "application/json") || strings.HasSuffix(mt, "+json")) {
		return // JSON by the SDK's own test
	}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Header.Set("Content-Type", "application/json")
}

// isRedirect reports whether the client follows resp to another request (or
// refuses to: guardRedirects). Its headers and body are not the
// provider's answer: its first byte is not the call's (the first-byte
// deadline and hedging wait for the answer's), and a reset of the request it
// leads to is a reset before any response.
func isRedirect(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return resp.Header.Get("Location") != ""
	}
	return false
}

// liveBody reports every read of a response body that returns bytes to
// onBytes: the call's idle deadline counts from the last byte received, not
// the last chunk decoded (callTrace.onResponse).
type liveBody struct {
	rc      io.ReadCloser
	onBytes func()
}

func (b *liveBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.onBytes()
	}
	return n, err
}

func (b *liveBody) Close() error { return b.rc.Close() }

func bodyReader(b []byte) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }

// withTraceContext returns req carrying the trace context of its context's
// span in the headers the configured propagator writes (traceparent by
// default; OTEL_PROPAGATORS chooses), so that a provider's own traces join the
// attempt's. With no propagator installed (tracing off, or
// OTEL_PROPAGATORS=none) req is returned untouched.
func withTraceContext(req *http.Request) *http.Request {
	prop := otel.GetTextMapPropagator()
	if len(prop.Fields()) == 0 || !trace.SpanContextFromContext(req.Context()).IsValid() {
		return req
	}
	req = req.Clone(req.Context())
	prop.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	return req
}

// tracingClient returns a copy of base (or of a zero client) whose transport
// records callTraces. base itself is not modified.
func tracingClient(base *http.Client) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	next := c.Transport
	if next == nil {
		next = NewTransport(0)
	}
	c.Transport = &traceTransport{next: next}
	return &c
}

// DefaultIdleConnsPerHost is how many idle connections to one provider host an
// adapter keeps when none is configured. net/http's default (2) makes a router
// under concurrent load open and close a TCP (and TLS) connection for most
// calls; keeping as many as the calls in flight lets every call reuse one.
const DefaultIdleConnsPerHost = 256

// NewTransport returns an http.Transport for one provider, keeping up to
// idlePerHost idle connections (0: DefaultIdleConnsPerHost), with HTTP/2 when
// the provider offers it, the proxy from the environment and dial, TLS and
// idle timeouts as net/http's defaults. It has no total timeout: the adapter's
// deadlines bound each call.
func NewTransport(idlePerHost int) *http.Transport {
	if idlePerHost <= 0 {
		idlePerHost = DefaultIdleConnsPerHost
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no global cap: the per-host cap bounds each provider
	t.MaxIdleConnsPerHost = idlePerHost
	t.ForceAttemptHTTP2 = true
	t.MaxResponseHeaderBytes = maxResponseHeaderBytes // HTTP/2's header list too
	return t
}
