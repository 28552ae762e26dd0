package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// AnthropicBaseURL is the Messages API root used when AnthropicConfig.BaseURL is empty.
const AnthropicBaseURL = "https://api.anthropic.com"

// AnthropicDefaultMaxTokens is sent as max_tokens (which Anthropic requires) when
// neither the request nor the configuration sets one.
const AnthropicDefaultMaxTokens = 4096

// AnthropicConfig configures one Anthropic Messages API provider.
type AnthropicConfig struct {
	Name    string // provider name as routes refer to it; required
	BaseURL string // API root without /v1; default AnthropicBaseURL
	APIKey  string // sent as the SDK sends it (option.WithAPIKey: the x-api-key header)
	Model   string // default model; a Request.Model overrides it
	// MaxTokens is max_tokens for requests that set none (default
	// AnthropicDefaultMaxTokens).
	MaxTokens int
	// Timeout bounds one whole call, streamed or not (0: none beyond ctx). When
	// it passes before any response byte the error is KindTimeout,
	// OutcomeUnknown; after some, KindStreamTimeout (a known outcome, Received),
	// as for every adapter: see CallWatch.
	Timeout time.Duration
	// FirstByteTimeout bounds a streamed call's wait for the response
	// headers (0: none). Passing it is KindTimeout with OutcomeUnknown
	// (nothing came back). A call that is not streamed ignores it: its
	// headers come only with the whole answer, so only Timeout bounds that
	// wait (unstreamedDeadlines).
	FirstByteTimeout time.Duration
	// StreamIdleTimeout bounds the gap between two stream events, counted from the
	// response headers (0: no idle limit). Exceeding it is KindStreamStalled.
	StreamIdleTimeout time.Duration
	// HTTPClient is copied, never modified. Leave its Timeout zero. Nil uses
	// NewTransport(MaxIdleConns).
	HTTPClient *http.Client
	// MaxIdleConns is how many idle connections to the provider are kept for
	// reuse (0: DefaultIdleConnsPerHost); size it to the calls in flight.
	MaxIdleConns int
	// Stream makes Complete use the streaming API (consumed to its end).
	Stream bool
	// MaxResponseBytes bounds what one call reads: the body, or the whole
	// stream (0: DefaultMaxResponseBytes). Past it the call fails with
	// KindResponseTooLarge and the router fails over (SPEC §17).
	MaxResponseBytes int64
}

// Anthropic is the adapter for the Anthropic Messages API, built on
// github.com/anthropics/anthropic-sdk-go. It is safe for concurrent use.
//
// The SDK's own retries and spans are off (the router decides retries; its
// attempt span is the call's span) and nothing is read from the ANTHROPIC_*
// environment: the configuration is the only source.
type Anthropic struct {
	cfg    AnthropicConfig
	client anthropic.Client
	redact redactor // the key and base_url's query values, out of every error returned
}

var (
	_ Provider = (*Anthropic)(nil)
	_ Streamer = (*Anthropic)(nil)
)

// NewAnthropic validates cfg and returns the adapter.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	if strings.TrimSpace(cfg.Name) == "" {
		return nil, errors.New("providers: Anthropic adapter needs a Name: set the provider name routes use (e.g. \"anthropic\")")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = AnthropicBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("providers: Anthropic adapter %q: BaseURL %q is not an absolute http(s) URL: write it like %s", cfg.Name, redactedURL(cfg.BaseURL), AnthropicBaseURL)
	}
	if cfg.Timeout < 0 || cfg.StreamIdleTimeout < 0 || cfg.FirstByteTimeout < 0 || cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("providers: Anthropic adapter %q: Timeout, FirstByteTimeout, StreamIdleTimeout and MaxTokens must be >= 0 (0 disables or defaults them)", cfg.Name)
	}
	if cfg.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("providers: Anthropic adapter %q: MaxResponseBytes must be >= 0 (0 is the default, %d)", cfg.Name, DefaultMaxResponseBytes)
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = AnthropicDefaultMaxTokens
	}
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{Transport: NewTransport(cfg.MaxIdleConns)}
	}
	hc := guardRedirects(limitClient(tracingClient(base), cfg.MaxResponseBytes), cfg.BaseURL)
	// base_url's query (a gateway's ?api-version=…, a proxy's tenant) is
	// sent with every request, as the OpenAI-compatible adapter sends it
	// (splitBaseQuery): left in the root the SDK resolves its path against,
	// it was dropped from every request, which the gateway refused.
	root, rawQuery := splitBaseQuery(cfg.BaseURL)
	hc = withBaseQuery(hc, rawQuery)
	client := anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(strings.TrimRight(root, "/")+"/"),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		// No span of the SDK's own: the router's attempt span is the call's
		// GenAI client span, and its transport sends the trace context. The
		// SDK's span read ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE from
		// the environment (put the tenant's prompt and the answer in the
		// router's traces when it said "content") and repeated the
		// attempt's token usage.
		option.WithOpenTelemetryTraces(false),
	)
	return &Anthropic{cfg: cfg, client: client, redact: newRedactor(cfg.APIKey, cfg.BaseURL)}, nil
}

// Name returns the configured provider name.
func (p *Anthropic) Name() string { return p.cfg.Name }

// Complete sends one message request. With cfg.Stream it uses the streaming API.
func (p *Anthropic) Complete(ctx context.Context, req *Request) (*Response, error) {
	if p.cfg.Stream {
		return p.CompleteStream(ctx, req, nil)
	}
	resp, err := p.complete(ctx, req)
	if req != nil {
		_, local := anthropicStops(req.Stop)
		cutAtStops(resp, local)
	}
	return resp, p.redact.error(err)
}

// complete is Complete without the stop sequences applied by the adapter.
func (p *Anthropic) complete(ctx context.Context, req *Request) (*Response, error) {
	params, perr := p.messageParams(req)
	if perr != nil {
		return nil, perr
	}
	wctx, w := WatchCall(ctx, p.cfg.Name, p.deadlines(false))
	defer w.Stop()
	tctx, trace := withCallTrace(wctx, w)
	trace.expect(p.cfg.Name, answerJSON)
	trace.rawInputs = true
	msg, err := p.client.Messages.New(tctx, params, option.WithRequestTimeout(p.requestTimeout()))
	if err != nil {
		return nil, p.forRequest(req, p.classify(w, trace, err, false))
	}
	if e := answeredMessageError(p.cfg.Name, trace, msg); e != nil {
		return nil, p.forRequest(req, e)
	}
	resp, err := p.response(msg)
	if resp != nil {
		resp.FirstByte = w.FirstByte()
	}
	return resp, err
}

// requestTimeout is passed to the SDK so that it does not refuse large
// max_tokens on the non-streaming API; our own deadlines bound the call.
func (p *Anthropic) requestTimeout() time.Duration {
	if p.cfg.Timeout > 0 {
		return p.cfg.Timeout
	}
	return time.Hour
}

// deadlines are the call's deadlines (SPEC §15); the first-byte and idle
// ones apply to streamed calls only (unstreamedDeadlines).
func (p *Anthropic) deadlines(streaming bool) Deadlines {
	if !streaming {
		return unstreamedDeadlines(p.cfg.Timeout)
	}
	return Deadlines{FirstByte: p.cfg.FirstByteTimeout, Idle: p.cfg.StreamIdleTimeout, Total: p.cfg.Timeout, Stream: true}
}
