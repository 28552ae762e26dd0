package providers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/netredact"
)

// OpenAIConfig configures one OpenAI-compatible provider (OpenAI, Azure OpenAI's
// /openai/v1 surface, vLLM, Ollama, Groq, Together, a local mock).
type OpenAIConfig struct {
	Name    string // provider name as routes refer to it; required
	BaseURL string // e.g. https://api.openai.com/v1; required
	APIKey  string // sent as a bearer token when non-empty
	Model   string // default model; a Request.Model overrides it
	// Timeout bounds one whole call, streamed or not (0: none beyond ctx). When it
	// passes before any response byte the error is KindTimeout, OutcomeUnknown;
	// after some, KindStreamTimeout (a known outcome). See CallWatch.
	Timeout time.Duration
	// FirstByteTimeout bounds a streamed call's wait for the response's
	// headers (0: none). Passing it is KindTimeout, OutcomeUnknown. A call
	// that is not streamed (Stream false) ignores it: its response's first
	// byte comes only once the whole answer is generated, so only Timeout
	// bounds that wait (unstreamedDeadlines).
	FirstByteTimeout time.Duration
	// StreamIdleTimeout bounds the gap between two stream chunks, counted from the
	// response headers (0: no idle limit). Exceeding it is KindStreamStalled.
	StreamIdleTimeout time.Duration
	Organization      string // OpenAI-Organization header when non-empty
	// SupportsLookup stores completions (store=true) with the router's attempt and
	// job ids as metadata, and enables Lookup through the stored-completions list.
	SupportsLookup bool
	// SendReasoningContent sends an assistant message's ReasoningContent
	// (reasoning_content): DeepSeek's thinking mode and Moonshot's
	// kimi-k2-thinking refuse a tool loop whose assistant turns lost it,
	// while other OpenAI-compatible APIs refuse the unknown member (Mistral:
	// "property 'messages.2.assistant.reasoning_content' is unsupported").
	// Off, it is left out.
	SendReasoningContent bool
	// HTTPClient is copied, never modified; its Transport is wrapped to read
	// Retry-After. Leave its Timeout zero: use Timeout, which does not cut streams
	// blindly and is classified precisely. Nil uses NewTransport(MaxIdleConns).
	HTTPClient *http.Client
	// MaxIdleConns is how many idle connections to the provider are kept for
	// reuse (0: DefaultIdleConnsPerHost); size it to the calls in flight.
	MaxIdleConns int
	// Stream makes Complete use the streaming API (consumed to its end).
	Stream bool
	// MaxResponseBytes bounds what one call reads: the body, or the whole
	// stream (0: DefaultMaxResponseBytes). Past it the call fails with
	// KindResponseTooLarge and the router fails over.
	MaxResponseBytes int64
}

// maxKeepaliveLines is how many lines without data go-openai accepts in a row
// in a stream before it calls the stream malformed. Its default, 300, fails a
// stream whose provider keeps the connection alive with more than 150 comments
// (each with its blank line) while it prepares a long answer: the comments
// never reach go-openai (sseFilter), their blank lines do. Such lines are
// bounded by max_response_bytes and stream_idle_timeout instead.
const maxKeepaliveLines = math.MaxInt32

// OpenAI is the adapter for OpenAI-compatible chat completion APIs, built on
// github.com/sashabaranov/go-openai. It is safe for concurrent use.
type OpenAI struct {
	cfg    OpenAIConfig
	root   string // cfg.BaseURL without its query (splitBaseQuery) and trailing slashes
	http   *http.Client
	client *openai.Client
	redact redactor // the key and base_url's query values, out of every error returned
}

var (
	_ Provider         = (*OpenAI)(nil)
	_ Streamer         = (*OpenAI)(nil)
	_ Looker           = (*OpenAI)(nil)
	_ LookupCapability = (*OpenAI)(nil)
)

// NewOpenAI validates cfg and returns the adapter.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Name) == "" {
		return nil, errors.New("providers: OpenAI adapter needs a Name: set the provider name routes use (e.g. \"openai\")")
	}
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, fmt.Errorf("providers: OpenAI adapter %q needs a BaseURL: set the API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1", cfg.Name)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("providers: OpenAI adapter %q: BaseURL %q is not an absolute http(s) URL: write it like https://api.openai.com/v1", cfg.Name, redactedURL(cfg.BaseURL))
	}
	if u.Fragment != "" || strings.Contains(cfg.BaseURL, "#") {
		return nil, fmt.Errorf("providers: OpenAI adapter %q: BaseURL %q has a fragment (#…), which is never sent and would swallow the API's paths: remove it", cfg.Name, netredact.URL(u))
	}
	if cfg.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("providers: OpenAI adapter %q: MaxResponseBytes must be >= 0 (0 is the default, %d)", cfg.Name, DefaultMaxResponseBytes)
	}
	if cfg.Timeout < 0 || cfg.StreamIdleTimeout < 0 || cfg.FirstByteTimeout < 0 {
		return nil, fmt.Errorf("providers: OpenAI adapter %q: Timeout, FirstByteTimeout and StreamIdleTimeout must be >= 0 (0 disables them)", cfg.Name)
	}
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{Transport: NewTransport(cfg.MaxIdleConns)}
	}
	hc := tracingClient(base)
	hc = limitClient(hc, cfg.MaxResponseBytes)
	root, rawQuery := splitBaseQuery(cfg.BaseURL)
	root = strings.TrimRight(root, "/")
	hc = guardRedirects(hc, cfg.BaseURL) // the base_url it suggests keeps the query
	hc = withBaseQuery(hc, rawQuery)
	cc := openai.DefaultConfig(cfg.APIKey)
	cc.BaseURL = root
	cc.OrgID = cfg.Organization
	cc.HTTPClient = hc
	cc.EmptyMessagesLimit = maxKeepaliveLines
	return &OpenAI{cfg: cfg, root: root, http: hc, client: openai.NewClientWithConfig(cc), redact: newRedactor(cfg.APIKey, cfg.BaseURL)}, nil
}

// Name returns the configured provider name.
func (p *OpenAI) Name() string { return p.cfg.Name }

// SupportsLookup reports whether Lookup can work (cfg.SupportsLookup).
func (p *OpenAI) SupportsLookup() bool { return p.cfg.SupportsLookup }

// Complete sends one chat completion. With cfg.Stream it uses the streaming API.
func (p *OpenAI) Complete(ctx context.Context, req *Request) (*Response, error) {
	resp, err := p.complete(ctx, req)
	return resp, p.redact.error(err)
}

// complete is Complete with the provider's text in its error as it came.
func (p *OpenAI) complete(ctx context.Context, req *Request) (_ *Response, err error) {
	if p.cfg.Stream {
		return p.CompleteStream(ctx, req, nil)
	}
	creq, perr := p.chatRequest(req)
	if perr != nil {
		return nil, perr
	}
	wctx, w := WatchCall(ctx, p.cfg.Name, unstreamedDeadlines(p.cfg.Timeout))
	defer w.Stop()
	tctx, trace := withCallTrace(wctx, w)
	// The provider's id of the request (x-request-id), on whatever error
	// its response led to, for the operator's report to the provider.
	defer func() { trace.noteRequestID(err) }()
	trace.expect(p.cfg.Name, answerJSON)
	trace.keepAnswer = true
	resp, err := p.client.CreateChatCompletion(tctx, wire(creq, req, trace))
	if err != nil && usageTypeError(err) {
		// A usage count go-openai refuses (10.0, 1e30): the answer may be
		// whole, and is read again with its usage read leniently.
		if r, ok := lenientCompletion(trace.answerBody()); ok {
			resp, err = r, nil
		}
	}
	if err != nil {
		return nil, p.classify(w, trace, err)
	}
	if len(resp.Choices) == 0 {
		// go-openai drops the "error" of a 200 answer: one that is an
		// error object is the provider refusing the request.
		_, status, _ := trace.result()
		if e := openAIAnsweredError(p.cfg.Name, status, trace.answerBody()); e != nil {
			return nil, e.billed(openAIUsage(resp.Usage), resp.ID, resp.Model)
		}
	}
	// An answer that names no model (some servers' streams and bodies
	// leave it out) is the model asked for: the caller gets "model" filled.
	out, err := p.responseBody(trace.answerBody(), resp.ID, cmp.Or(resp.Model, creq.Model), resp.Created, resp.Choices, resp.Usage)
	if out != nil {
		out.FirstByte = w.FirstByte()
		out.SystemFingerprint = fingerprint(resp.SystemFingerprint)
	}
	return out, err
}

// classify turns a call's error into an *Error using what only the adapter
// knows: whether its own context ended (which decides over however the transport
// reported it), whether a 2xx answer had begun (a body that then breaks is
// KindMalformedResponse, not a reset before any response; nor is a response
// whose headers began and broke off, headersCut), whether the request was
// wholly written (a timeout before it was is known not to have been
// processed, callTrace.unsent), the model sent (a 404 without an API error,
// routeNotFound), and the Retry-After header.
func (p *OpenAI) classify(w *CallWatch, trace *callTrace, err error) *Error {
	if e, ok := tooLargeResponse(p.cfg.Name, trace, err); ok {
		return e
	}
	e := Classify(p.cfg.Name, err)
	_, status, retryAfter := trace.result()
	cut, isCut := headersCut(p.cfg.Name, w, err, e, trace.answer == answerSSE)
	switch {
	case e.StatusCode == 0 && w.Classify(err) != nil:
		e = w.Classify(err)
	case isCut:
		// The response's first byte came, its headers never ended.
		e = cut
	case e.Kind == KindConnReset && status >= 200 && status <= 299:
		// The answer's headers came; its body broke off or does not decode.
		e = NewError(p.cfg.Name, KindMalformedResponse,
			fmt.Sprintf("HTTP %d response body incomplete or invalid: %s", status, truncate(netredact.ErrorText(err))))
		e.Err = err
		e.Received = true // the provider answered (and billed): the outcome is known
	case undecodableBody(err) && status >= 200 && status <= 299:
		// The answer's headers came and said gzip; its body is not.
		e = NewError(p.cfg.Name, KindMalformedResponse, undecodableMessage(status, err))
		e.Err = err
		e.Received = true // the provider answered: the outcome is known
	case e.Kind == KindMalformedResponse && status >= 200 && status <= 299:
		// The answer came whole and does not decode (not JSON, or not the
		// API's shape): the provider answered.
		e.Received = true
	case status >= 200 && status <= 299 && brokenAnswer(err, e):
		// The answer's headers came; its body broke on something else
		// (framing: a chunk length that is not hex, a bad trailer): the
		// provider answered, as for a body that breaks off.
		e = NewError(p.cfg.Name, KindMalformedResponse,
			fmt.Sprintf("HTTP %d response body incomplete or invalid: %s", status, truncate(netredact.ErrorText(err))))
		e.Err = err
		e.Received = true
	case (e.Kind == KindConnReset || undecodableBody(err)) && status >= 400:
		// An error status came and its body broke off (or does not
		// decode): the status says what to do (a 400 is not retried, a
		// 429 keeps its Retry-After), not the broken body. A redirect's
		// status (a 307 followed, then a reset before the next response's
		// headers) says nothing: a reset.
		msg := fmt.Sprintf("HTTP %d error response body incomplete: %s", status, truncate(netredact.ErrorText(err)))
		if undecodableBody(err) {
			msg = undecodableMessage(status, err)
		}
		ne := ClassifyStatus(p.cfg.Name, status, "", msg)
		ne.Err = err
		e = ne
	}
	if e.StatusCode != 0 && e.RetryAfter == 0 {
		e.RetryAfter = retryAfter
	}
	if e.Kind == KindModelNotFound && e.StatusCode == http.StatusNotFound && !apiErrorObject(err) {
		routeNotFound(e, trace.model)
	}
	trace.unsent(e)
	return e
}

// brokenAnswer reports whether err, classified as e, broke the body of an
// answer whose 2xx headers had come: any error but the adapter's own
// (*Error: a web page, a response past its bound) and a deadline or a
// cancellation, which say what ended the call themselves.
func brokenAnswer(err error, e *Error) bool {
	if _, ok := AsError(err); ok {
		return false
	}
	return e.Kind != KindTimeout && e.Kind != KindCancelled
}

// contextError classifies a call whose context ended: cancelled by the caller,
// or a deadline (ours or the caller's) passed with the outcome unknown.
func contextError(provider string, ctx context.Context, cause error) *Error {
	var e *Error
	if errors.Is(ctx.Err(), context.Canceled) {
		e = NewError(provider, KindCancelled, "call cancelled by the router")
	} else {
		e = NewError(provider, KindTimeout, "deadline passed before the provider answered")
	}
	e.Err = cause
	return e
}
