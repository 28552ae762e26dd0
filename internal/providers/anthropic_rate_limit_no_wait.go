package providers

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// longContextRefusedMessage is what Anthropic's "Extra usage is required for
// long context requests." says in place of the provider's message (the
// router's account and its billing are the operator's business).
const longContextRefusedMessage = "the request is longer than the router's account may send to this target without the provider's long-context access; " +
	"the router fails over to another target without retrying this one " +
	"(the provider's own message is in the router's log)"

// failOverLongContext gives Anthropic's 429 rate_limit_error "Extra usage is
// required for long context requests." — the router's account may not send
// a prompt over the standard context (200K tokens) to this model without
// the long-context entitlement ("extra usage") — ActionFailover and
// FaultCaller, as failOverTooLarge does a request over a per-minute limit:
// retried after its Retry-After it is refused again, however long it
// waits; another target (another account, another provider) may take it;
// and counted against the breaker, one tenant's long prompts would open it
// for every tenant's short ones. It stays rate_limited (Anthropic's type),
// not context_length_exceeded, whose failover skips every target of no
// larger window: the same model on another account is one that may take
// it. Called after operatorsOwn.
func (e *Error) failOverLongContext(msg string) {
	m := strings.ToLower(msg)
	if e.Kind != KindRateLimited || !strings.Contains(m, "extra usage") || !strings.Contains(m, "long context") {
		return
	}
	e.failOverAsCallers(longContextRefusedMessage)
}

// forRequest is an error of a call for req classified by what req was too:
// the provider's max_tokens refused (configuredMaxTokens), a request over
// the input-tokens-per-minute limit by itself (overInputLimit), a max_tokens
// over the output-tokens-per-minute limit (overOutputRateLimit).
func (p *Anthropic) forRequest(req *Request, e *Error) *Error {
	return p.overOutputRateLimit(req, p.overInputLimit(req, p.configuredMaxTokens(req, e)))
}

// inputLimitWords finds the limit in Anthropic's input-tokens-per-minute
// 429 ("This request would exceed the rate limit for your organization (…)
// of 30,000 input tokens per minute", "… your organization's rate limit of
// 80,000 input tokens per minute").
var inputLimitWords = regexp.MustCompile(`(?i)\b([0-9][0-9,]*) input tokens per minute`)

// overInputLimit gives an Anthropic input-tokens-per-minute 429 whose
// request is by itself larger than the limit the message names — its text
// at estimatedBytesPerToken, an under-count for Claude's tokenizers, which
// give more tokens than that to English, code and most other text — what
// failOverTooLarge gives OpenAI's "Request too large … on tokens per min":
// ActionFailover and FaultCaller, and the router's message. Anthropic words
// the two cases alike ("This request would exceed …"); a request under the
// limit was refused for the minute's other requests, and stays an ordinary
// rate limit, retried after its Retry-After. It looks at the request only
// for such a 429: no cost on any other path.
func (p *Anthropic) overInputLimit(req *Request, e *Error) *Error {
	limit, msg := namedRateLimit(req, e, inputLimitWords)
	if limit <= 0 || promptBytes(req)/estimatedBytesPerToken <= limit {
		return e
	}
	c := *e
	c.ProviderMessage = msg
	c.failOverAsCallers(tooLargeForLimitMessage)
	return &c
}

// namedRateLimit is the per-minute limit that words find in e, an
// ordinary rate limit of a call for req (not yet reclassified), and the
// provider's message it was read from; 0 when e is no such error or names
// no such limit.
func namedRateLimit(req *Request, e *Error, words *regexp.Regexp) (int64, string) {
	if e == nil || req == nil || e.Kind != KindRateLimited || e.Fault != FaultProvider {
		return 0, ""
	}
	msg := e.ProviderMessage
	if msg == "" {
		msg = e.Message
	}
	m := words.FindStringSubmatch(msg)
	if m == nil {
		return 0, ""
	}
	limit, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil || limit <= 0 {
		return 0, ""
	}
	return limit, msg
}

// outputLimitWords finds the limit in Anthropic's output-tokens-per-minute
// 429 ("This request would exceed the rate limit for your organization (…)
// of 8,000 output tokens per minute").
var outputLimitWords = regexp.MustCompile(`(?i)\b([0-9][0-9,]*) output tokens per minute`)

// tooManyOutputTokensMessage is what an output-tokens-per-minute 429 for a
// request whose own max_tokens is above the limit says in place of the
// provider's message (which names the account and its limits).
const tooManyOutputTokensMessage = "the request's max_tokens alone is above the router's account's output-tokens-per-minute limit at this target " +
	"(the provider counts max_tokens against it before generating anything): the router fails over to another target without retrying this one; " +
	"a lower max_tokens lets this target take the request (the provider's own message, which names the account and its limits, is in the router's log)"

// overOutputRateLimit gives an Anthropic output-tokens-per-minute 429, for a
// request whose max_tokens sent is above the limit the message names, what
// overInputLimit gives its input twin: Anthropic counts max_tokens against
// that limit when the request begins, so such a request is refused however
// long it waits, and retrying it would only count against the target's
// breaker. The caller's own max_tokens is the caller's (ActionFailover,
// FaultCaller); providers[].max_tokens, sent when the request set none, is
// the operator's to lower (KindMisconfigured, as configuredMaxTokens). A
// max_tokens under the limit was refused for the minute's other requests,
// and stays an ordinary rate limit, retried after its Retry-After.
func (p *Anthropic) overOutputRateLimit(req *Request, e *Error) *Error {
	limit, msg := namedRateLimit(req, e, outputLimitWords)
	if limit <= 0 {
		return e
	}
	sent := int64(p.cfg.MaxTokens) // what messageParams sends
	if req.MaxTokens > 0 {
		sent = int64(req.MaxTokens)
	}
	if sent <= limit {
		return e
	}
	c := *e
	c.ProviderMessage = msg
	if req.MaxTokens > 0 {
		c.failOverAsCallers(tooManyOutputTokensMessage)
		return &c
	}
	pol := policies[KindMisconfigured]
	c.Kind, c.Fault, c.Action, c.OutcomeUnknown = KindMisconfigured, pol.fault, pol.action, pol.unknown
	c.Message = fmt.Sprintf("the request set no max_tokens, so the provider's providers[].max_tokens (%d) was sent, "+
		"and it is above the router's account's output-tokens-per-minute limit at this target, which the provider counts max_tokens against "+
		"before generating anything: an operator must lower providers[].max_tokens for %s below that limit "+
		"(the provider's own message, which names the account and its limits, is in the router's log)", p.cfg.MaxTokens, p.cfg.Name)
	return &c
}

// promptBytes is the size of what a request sends as input: its messages'
// texts and tool calls, and its tools (not what the adapter adds, nor
// fields it does not send: the count stays under the request's).
func promptBytes(req *Request) int64 {
	n := int64(len(req.Tools))
	for _, m := range req.Messages {
		n += int64(len(m.Content) + len(m.ToolCalls) + len(m.ToolCallID))
	}
	return n
}
