package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/routerhq/router/internal/netredact"
)

// anthropicTypeKinds maps Anthropic's error types (error.type) to the taxonomy.
// overloaded_error (HTTP 529) is transient like a 503; rate_limit_error honours
// retry-after; invalid_request_error is the caller's (split further by
// requestKind: "prompt is too long" is context length), but for the router's
// account refused (accountRefusal: out of credit, a spend limit reached,
// organization disabled; anthropicAccountCodes: its encryption key, a hold);
// billing_error is our account's quota.
var anthropicTypeKinds = map[string]Kind{
	"authentication_error": KindAuth,
	"permission_error":     KindAuth,
	"billing_error":        KindQuotaExceeded,
	"not_found_error":      KindModelNotFound,
	"rate_limit_error":     KindRateLimited,
	"timeout_error":        KindGatewayTimeout,
	"api_error":            KindServerError,
	"overloaded_error":     KindUnavailable,
	"conflict_error":       KindConflict,
	"request_too_large":    KindBadRequest,
}

// anthropicQuotaCodes are error_code values of a 429 that are spend limits, not
// rate limits: waiting does not help.
var anthropicQuotaCodes = map[string]bool{
	"contract_spend_limit_reached": true,
	"enforced_spend_limit_reached": true,
}

// accountRefusal reports the kind of an invalid_request_error whose message
// says Anthropic refuses the router's own account, and false for any other.
// Anthropic answers some account states with HTTP 400 invalid_request_error
// — the type and status of a caller's bad request, which would stop the job
// without failover, never count against the target's breaker, and show the
// tenant the router's account:
//   - "Your credit balance is too low to access the Anthropic API. Please go
//     to Plans & Billing to upgrade or purchase credits.": quota_exceeded;
//   - "This organization has been disabled.": auth (the account the target's
//     key belongs to is refused, whatever the request), as is Groq's
//     "Organization has been restricted." (code organization_restricted);
//   - "You have reached your specified API usage limits. You will regain
//     access on …" (or "… specified workspace API usage limits …"): a spend
//     limit the operator set on the organization or workspace (Anthropic's
//     errors page: "The API also returns a 400 when usage reaches an
//     organization or workspace spend limit you set"): quota_exceeded.
//
// All are the router's own account: they fail over, count against the
// breaker, and their message is hidden from tenants (operatorsOwn).
func accountRefusal(msg string) (Kind, bool) {
	// Lowercased and its white space runs one space: the words are matched,
	// not how a proxy wrapped or spaced them.
	m := strings.Join(strings.Fields(strings.ToLower(msg)), " ")
	switch {
	case strings.Contains(m, "credit balance"):
		return KindQuotaExceeded, true
	case strings.Contains(m, "api usage limit"):
		// Both spend-limit wordings, and the tier cap's "You have reached
		// your API usage limits" should a 400 ever carry it.
		return KindQuotaExceeded, true
	case strings.Contains(m, "organization has been disabled"), strings.Contains(m, "organization is disabled"),
		strings.Contains(m, "account has been disabled"), strings.Contains(m, "organization has been restricted"):
		return KindAuth, true
	}
	return "", false
}

// anthropicAccountCodes are error.details.error_code values that Anthropic
// sends with a 400 invalid_request_error about the router's account, not the
// request: whatever the request, every call to the target fails until an
// operator acts. The workspace's customer-managed encryption key disabled or
// revoked (cmek_key_disabled), or blocked by the key management service's
// network rules (cmek_key_network_blocked), is the operator's setup of the
// target: misconfigured (auth's "check its api_key_env" would send the
// operator to the wrong place). organization_on_hold — Anthropic disabled the
// organization for trust and safety reasons — is auth, as "This organization
// has been disabled." is (accountRefusal).
var anthropicAccountCodes = map[string]Kind{
	"cmek_key_disabled":        KindMisconfigured,
	"cmek_key_network_blocked": KindMisconfigured,
	"organization_on_hold":     KindAuth,
}

// cmekRefused gives a refusal for the workspace's encryption key
// (anthropicAccountCodes) the router's message, the provider's kept for the
// router's log, as operatorsOwn does for the account's other states: the
// tenant is told the target's setup failed, not how the operator keys it.
func cmekRefused(e *Error, code string) {
	if e.Kind != KindMisconfigured || !strings.HasPrefix(code, "cmek_key_") {
		return
	}
	e.ProviderMessage = e.Message
	e.Message = "the provider cannot use the customer-managed encryption key of the router's workspace for this target (" + e.Code +
		"): an operator must re-enable the key or let Anthropic reach it (the provider's own message is in the router's log)"
}

// StatusOverloaded is Anthropic's HTTP status for overloaded_error.
const StatusOverloaded = 529

// classifyAnthropicAPI classifies an error response (status >= 400) or an error
// event inside a stream (status 0).
func classifyAnthropicAPI(provider string, status int, typ, code, msg string, h http.Header) *Error {
	kind, ok := anthropicTypeKinds[typ]
	switch {
	case typ == "invalid_request_error" && (status == 0 || requestStatus(status)):
		// A status that says the request is wrong (400, 413, 422), or an
		// error event in a stream; another status (405 from a proxy) is
		// classified by that status.
		kind = requestKind(code, typ, msg)
		if k, ok := accountRefusal(msg); ok {
			kind = k
		}
		if k, ok := anthropicAccountCodes[code]; ok {
			kind = k
		}
	case ok && requestStatus(status) && (kind == KindServerError || kind == KindUnavailable || kind == KindGatewayTimeout):
		// A status that says the request is wrong (400, 413, 422) with a
		// type that says the server failed (api_error, overloaded_error,
		// timeout_error: a gateway's or a compatible server's wording) is
		// classified by its status, as the OpenAI-compatible adapter does:
		// never retried on the same model (SPEC §6.2), nor the target's
		// breaker failure.
		kind = statusKind(status, code, typ, msg)
	case status == StatusOverloaded:
		kind = KindUnavailable
	case !ok:
		kind = statusKind(status, code, typ, msg)
	}
	if kind == KindRateLimited && anthropicQuotaCodes[code] {
		kind = KindQuotaExceeded
	}
	e := NewError(provider, kind, truncate(msg))
	e.StatusCode = status
	e.Code = truncateTo(typ, maxCode)
	if code != "" {
		e.Code = truncateTo(code, maxCode)
	}
	if e.Message == "" && status != 0 {
		e.Message = statusMessage(status)
	}
	unlistedStatus(e, msg)
	operatorsOwn(e)
	e.failOverLongContext(msg)
	cmekRefused(e, code)
	if h != nil && status != 0 {
		e.RetryAfter = ParseRetryAfter(status, h, time.Now())
	}
	e = e.generated().failOverUnsupported(msg)
	if e.Kind == KindBadRequest && (outputFormatRefused(msg) || anthropicFeatureRefused(msg) || userIDRefused(msg)) {
		e.Action = ActionFailover
	}
	return e
}

// outputFormatRefused reports an invalid_request_error about the structured
// output format the adapter sent for a json_schema response format
// (output_config.format, or output_format as the beta named it): Anthropic's
// structured outputs refuse schema keywords they do not support (minimum,
// maxLength, …), recursive schemas and objects without additionalProperties
// false, and a model without the feature refuses the field itself
// ("output_config.format: Extra inputs are not permitted"). A schema an
// OpenAI-compatible target takes (the router validates the answer against
// it whatever the target) is not a request this target can take: like a
// feature the target lacks (featureUnsupported), it stays the request's
// bad_request — the caller's fault, which the target's breaker does not
// count against it — and fails over to the route's next target.
func outputFormatRefused(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "output_config") || strings.Contains(m, "output_format")
}

// statusMessage is the message of an error response whose body said none (a
// proxy's HTML page, an empty body): the status's name, or, for a status
// net/http has no name for, its number — 529, Anthropic's overloaded, said
// so — rather than an empty message.
func statusMessage(status int) string {
	if status == StatusOverloaded {
		return "HTTP 529: the provider is overloaded"
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return fmt.Sprintf("HTTP %d", status)
}

// fromAnthropicError classifies the SDK's *anthropic.Error. An error event
// inside a stream carries the stream's 200 status; it is classified by type,
// and marked AnsweredWithError: the provider reported the failure, the
// stream did not break off (CompleteStream clears the mark for one after
// message_start: the message had begun). An error status whose body is markup
// (markupBody) is a proxy's page: described (pageMessage), and a 400, 413
// or 422 one fails over (proxyPage).
func fromAnthropicError(provider string, ae *anthropic.Error) *Error {
	status := ae.StatusCode
	var h http.Header
	inStream := status >= 200 && status <= 299
	if inStream {
		status = 0
	} else if ae.Response != nil {
		h = ae.Response.Header
	}
	msg := ae.Message
	// The SDK keeps a body that is not JSON as it came (RawJSON): a
	// proxy's or CDN's web page is described, never quoted, and classified
	// by its status, as for the OpenAI adapter (Classify).
	raw := []byte(ae.RawJSON())
	page := !inStream && markupBody(raw)
	if page {
		msg = pageMessage(status, raw)
	}
	e := classifyAnthropicAPI(provider, status, string(ae.Type()), string(ae.ErrorCode()), msg, h)
	if page {
		proxyPage(e)
	}
	e.AnsweredWithError = refusedInStream(e, inStream)
	e.ProviderRequestID = anthropicRequestID(ae)
	e.Err = ae
	return e
}

// anthropicRequestID is Anthropic's id of the request an error answered
// (the request-id header the SDK read, else the body's request_id, else
// the response's headers), clipped (ClipIdent), or "".
func anthropicRequestID(ae *anthropic.Error) string {
	if id := ClipIdent(ae.RequestID, maxRequestID); id != "" {
		return id
	}
	var body struct {
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal([]byte(ae.RawJSON()), &body) == nil {
		if id := ClipIdent(body.RequestID, maxRequestID); id != "" {
			return id
		}
	}
	if ae.Response != nil {
		return responseRequestID(ae.Response.Header)
	}
	return ""
}

// inStreamErrorPrefix is how the SDK reports an error event it could not attach
// to a response.
const inStreamErrorPrefix = "received error while streaming: "

// fromStreamErrorText classifies an in-stream error event the SDK reported as
// text; ok is false when err is not one.
func fromStreamErrorText(provider string, err error) (*Error, bool) {
	s := err.Error()
	i := strings.Index(s, inStreamErrorPrefix)
	if i < 0 {
		return nil, false
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(s[i+len(inStreamErrorPrefix):]), &body) != nil || body.Error.Type == "" {
		e := NewError(provider, KindStreamMalformed, "error event does not decode: "+truncate(s))
		e.Err = err
		return e, true
	}
	e := classifyAnthropicAPI(provider, 0, body.Error.Type, "", body.Error.Message, nil)
	e.AnsweredWithError = refusedInStream(e, true)
	e.Err = err
	return e, true
}

// classify turns a call's error into an *Error: the watch first (a deadline or
// a cancellation cut the call: it knows which, and whether bytes had come),
// then the API's error, then the transport's.
func (p *Anthropic) classify(w *CallWatch, trace *callTrace, err error, streaming bool) *Error {
	name := p.cfg.Name
	var (
		ae     *anthropic.Error
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
		e      *Error
	)
	if te, ok := tooLargeResponse(name, trace, err); ok {
		return te.withRequestID(trace.providerRequestID())
	}
	switch we := w.Classify(err); {
	case we != nil:
		e = we
	case errors.As(err, &ae):
		return fromAnthropicError(name, ae).withRequestID(trace.providerRequestID())
	case errors.As(err, &synErr), errors.As(err, &typErr):
		kind := KindMalformedResponse
		if streaming {
			kind = KindStreamMalformed
		}
		e = NewError(name, kind, "response does not decode: "+truncate(err.Error()))
		e.Received = true // a body came (a 2xx one: an error status is an *anthropic.Error)
	default:
		if se, ok := fromStreamErrorText(name, err); ok {
			return se.withRequestID(trace.providerRequestID()) // the stream's response named it
		}
		e = Classify(name, err)
		_, status, retryAfter := trace.result()
		if cut, ok := headersCut(name, w, err, e, streaming); ok {
			// The response's first byte came, its headers never ended:
			// a known failure, not a reset to retry (as for OpenAI).
			return cut
		}
		switch {
		case (e.Kind == KindConnReset || undecodableBody(err)) && status >= 400:
			// An error status came and its body broke off (or does not
			// decode): the status says what to do (a 400 is not retried,
			// a 429 keeps its Retry-After), not the broken body, as for
			// the OpenAI adapter. A redirect's status (a 307 followed,
			// then a reset before the next response's headers) says
			// nothing: a reset.
			msg := fmt.Sprintf("HTTP %d error response body incomplete: %s", status, truncate(netredact.ErrorText(err)))
			if undecodableBody(err) {
				msg = undecodableMessage(status, err)
			}
			e = ClassifyStatus(name, status, "", msg)
			e.RetryAfter = retryAfter
		case undecodableBody(err) && status >= 200 && status <= 299:
			// The answer's headers came and said gzip; its body is not.
			kind := KindMalformedResponse
			if streaming {
				kind = KindStreamMalformed
			}
			e = NewError(name, kind, undecodableMessage(status, err))
			e.Received = true // the provider answered: the outcome is known
		case w.FirstByte() > 0 && e.Fault == FaultNetwork,
			status >= 200 && status <= 299 && brokenAnswer(err, e):
			// The answer's headers came; its body broke off, or broke on
			// something else (framing: a chunk length that is not hex), or
			// the SDK refused it for a reason of its own.
			kind := KindMalformedResponse
			if streaming {
				kind = KindStreamCut
			}
			what := "response broken off: "
			if e.Fault != FaultNetwork {
				what = fmt.Sprintf("HTTP %d response body incomplete or invalid: ", status)
			}
			e = NewError(name, kind, what+truncate(netredact.ErrorText(err)))
			e.Received = true // the provider had begun answering: the outcome is known
		}
	}
	if e.Err == nil {
		e.Err = err
	}
	trace.unsent(e)
	return e.withRequestID(trace.providerRequestID())
}

// configuredMaxTokens reclassifies Anthropic's refusal of max_tokens when the
// router chose it: a request that sets no max_tokens is sent the provider's
// (providers[].max_tokens, which the Messages API requires), and one above the
// model's output limit is refused with 400 invalid_request_error "max_tokens:
// 100000 > 64000, which is the maximum allowed number of output tokens for
// …". That is not the caller's bad request but the router's configuration of
// this target: misconfigured (fails over, counts against the breaker), with a
// message naming the setting to lower. When the request set max_tokens
// itself, the refusal stays the caller's.
func (p *Anthropic) configuredMaxTokens(req *Request, e *Error) *Error {
	if e == nil || req == nil || req.MaxTokens > 0 || e.Kind != KindBadRequest || !overOutputLimit(e.Message) {
		return e
	}
	pol := policies[KindMisconfigured]
	c := *e
	c.Kind, c.Fault, c.Action, c.OutcomeUnknown = KindMisconfigured, pol.fault, pol.action, pol.unknown
	c.Message = truncate(fmt.Sprintf("the request set no max_tokens, so the provider's providers[].max_tokens (%d) was sent, "+
		"and the model refuses it: an operator must lower providers[].max_tokens for %s to the model's output limit (Anthropic: %s)",
		p.cfg.MaxTokens, p.cfg.Name, e.Message))
	return &c
}

// overOutputLimit reports Anthropic's refusal of a max_tokens above the
// model's output limit ("max_tokens: 100000 > 64000, which is the maximum
// allowed number of output tokens for …"), not any other complaint about
// max_tokens.
func overOutputLimit(msg string) bool {
	m := strings.ToLower(strings.TrimSpace(msg))
	return strings.HasPrefix(m, "max_tokens:") && (strings.Contains(m, ">") || strings.Contains(m, "maximum"))
}
