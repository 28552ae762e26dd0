package providers

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/netredact"
)

// maxMessage bounds Error.Message: provider messages are kept short so that a
// provider echoing request content cannot carry much of a prompt into logs.
const maxMessage = 300

// maxCode bounds Error.Code (the provider's error code, or its type): codes
// are short identifiers, and the code is stored and shown like the message.
const maxCode = 100

// maxParam bounds Error.Param (the request member the provider's error
// names): a path into the request, short for any request a provider takes.
const maxParam = 128

// Classify maps an error from go-openai, net/http or context into the taxonomy.
// If err already is or wraps an *Error, that *Error is returned as is. A nil err
// gives nil.
//
// Classify sees only the error: go-openai does not expose response headers, so
// Retry-After is attached by the adapter (see the OpenAI adapter's transport), and
// an adapter that knows its own context ended overrides transport-level results.
func Classify(provider string, err error) *Error {
	if err == nil {
		return nil
	}
	if pe, ok := AsError(err); ok {
		return pe
	}
	if e, ok := redirectRefused(provider, err); ok {
		return e
	}
	var (
		reqErr *openai.RequestError
		apiErr *openai.APIError
	)
	isReq := errors.As(err, &reqErr)
	isAPI := errors.As(err, &apiErr)
	if isReq || isAPI {
		var status int
		var code, typ, msg, param string
		if isReq {
			status = reqErr.HTTPStatusCode
			code, typ, msg = bodyError(reqErr.Body)
			param = bodyParam(reqErr.Body)
			if markupBody(reqErr.Body) {
				// A proxy's or CDN's web page, not the API's error:
				// described, never quoted as markup.
				msg = pageMessage(status, reqErr.Body)
			}
		}
		if isAPI {
			// go-openai's APIError is empty when the body's "error" is
			// not an object ({"error": "…"}: TGI, LM Studio, proxies): only
			// what it holds overrides what the body says.
			if status == 0 {
				status = apiErr.HTTPStatusCode
			}
			if c := apiCode(apiErr); c != "" {
				code = c
			}
			if apiErr.Type != "" {
				typ = apiErr.Type
			}
			if apiErr.Message != "" {
				msg = apiErr.Message
			}
			if apiErr.Param != nil && *apiErr.Param != "" {
				param = *apiErr.Param
			}
		}
		e := classifyHTTP(provider, status, code, typ, msg)
		if isReq && markupBody(reqErr.Body) {
			proxyPage(e)
		}
		e.Param = ClipIdent(param, maxParam)
		e.Err = err
		return e
	}
	e := classifyTransport(provider, err)
	e.Err = err
	return e
}

// ClassifyStatus classifies an HTTP error response by its status code and, when
// the provider sent them, its error code and message (OpenAI's error.code and
// error.message). It is what Classify does for an HTTP error, without go-openai.
func ClassifyStatus(provider string, status int, code, message string) *Error {
	return classifyHTTP(provider, status, code, "", message)
}

func classifyHTTP(provider string, status int, code, typ, msg string) *Error {
	kind := statusKind(status, code, typ, msg)
	e := NewError(provider, kind, truncate(msg))
	e.StatusCode = status
	e.Code = ClipIdent(code, maxCode)
	if e.Code == "" {
		e.Code = ClipIdent(typ, maxCode)
	}
	if e.Message == "" && status != 0 {
		e.Message = statusMessage(status) // 529 and other unnamed statuses get words too
	}
	unlistedStatus(e, msg)
	streamOptionsMessage(e, msg)
	operatorsOwn(e)
	return e.generated().failOverUnsupported(msg).failOverFieldLimit(code).failOverTooLarge(msg)
}

// unlistedStatus gives a misconfigured error from an HTTP status (a 4xx the
// taxonomy does not list: 405, 410, 415, 421, 451…) a message that names the
// status and what an operator should check. Such a status is what a proxy, a
// wrong base_url or a redirect followed as a GET answers: it says nothing
// against the caller's request, so it must not stop the job as if it did.
func unlistedStatus(e *Error, msg string) {
	if e.Kind != KindMisconfigured || e.StatusCode == 0 || requestStatus(e.StatusCode) {
		return // a 400, 413 or 422 misconfigured says why itself (requestKind)
	}
	m := fmt.Sprintf("HTTP %d %s from the target, which does not say the request is wrong: an operator must check the target's base_url (a proxy or a redirect in front of the API?)",
		e.StatusCode, http.StatusText(e.StatusCode))
	if msg = strings.TrimSpace(msg); msg != "" {
		m += "; the provider said: " + msg
	}
	e.Message = truncate(m)
}

// failOverFieldLimit gives OpenAI's string_above_max_length ("Invalid
// 'tools[0].function.description': string too long. Expected a string with
// maximum length 1024 …") ActionFailover. It is a bad request, the caller's
// — not context length: it is a limit of OpenAI's API on one member of the
// request (a tool's description, a name, metadata, one message's text),
// whatever the model's context window, so it neither says the prompt is too
// long nor that a target of a larger window would take it. Other APIs
// (Anthropic, self-hosted OpenAI-compatible servers) do not set that limit
// and may take the request, so another target is tried, as for a feature
// this target lacks (failOverUnsupported); when none takes it, the caller
// hears the provider's code and param.
func (e *Error) failOverFieldLimit(code string) *Error {
	if e.Kind == KindBadRequest && code == "string_above_max_length" {
		e.Action = ActionFailover
	}
	return e
}

// operatorsMessages are what the failures about the router's own account at
// a provider say in place of the provider's message (operatorsOwn).
var operatorsMessages = map[Kind]string{
	KindAuth: "the provider refused the router's credentials for this target: an operator must check its api_key_env (the provider's own message is in the router's log)",
	KindRateLimited: "the provider rate-limited the router's account for this target (retried after its Retry-After and failed over " +
		"within the route's max_retries and max_attempts; the provider's own message, which names the account and its limits, is in the router's log)",
	KindQuotaExceeded: "the router's account for this target is out of quota or credit at the provider: an operator must check its plan and billing " +
		"(the provider's own message is in the router's log)",
	KindModelNotFound: "the provider does not serve this target's model to the router's account: an operator must check the target's model " +
		"(the provider's own message is in the router's log)",
}

// operatorsOwn keeps the provider's message of a failure about the router's
// own account — a refused credential, a rate limit, a quota, a model the
// account cannot use — out of Message, which is stored on the attempt and
// shown to the job's owner: OpenAI's "Incorrect API key provided: sk-…abcd"
// quotes the end of the router's own key, its rate limits name the
// organization ("in organization org-…") and its limits, and the account's
// billing and model access are the operator's business, not a tenant's. The
// message stays in ProviderMessage, for the router's log and the conformance
// report. The kind and code still say what happened.
func operatorsOwn(e *Error) {
	if m, ok := operatorsMessages[e.Kind]; ok && e.Message != m {
		e.ProviderMessage, e.Message = e.Message, m
	}
}

// requestStatus reports the HTTP statuses that say the caller's request is
// wrong (400, 413, 422): the only ones classified by requestKind.
func requestStatus(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge ||
		status == http.StatusUnprocessableEntity
}

func statusKind(status int, code, typ, msg string) Kind {
	if requestStatus(status) {
		if rateLimitCode(code, typ) {
			// Groq's 413 "Request too large … on tokens per minute",
			// code rate_limit_exceeded: the router's account's limit at
			// this target, not the caller's request (failOverTooLarge).
			return KindRateLimited
		}
		return requestKind(code, typ, msg)
	}
	switch status {
	case 0: // an error event inside a stream: no status of its own
		if n := streamedStatus(code); n != 0 {
			return statusKind(n, "", typ, msg)
		}
		return typeKind(code, typ, msg)
	case http.StatusForbidden:
		if contentPolicy(code, msg) {
			// OpenRouter refuses a prompt its moderation flagged with 403
			// ("Your chosen model requires moderation and your input was
			// flagged …"): the caller's content, not the router's
			// credentials — no breaker count, no credentials message.
			return KindContentPolicy
		}
		return KindAuth
	case http.StatusUnauthorized:
		return KindAuth
	case http.StatusPaymentRequired:
		return KindQuotaExceeded
	case http.StatusNotFound:
		return KindModelNotFound
	case http.StatusRequestTimeout:
		return KindRequestTimeout
	case http.StatusConflict:
		return KindConflict
	case http.StatusTooManyRequests:
		if quotaCode(code, typ) || quotaWords(msg) {
			return KindQuotaExceeded
		}
		return KindRateLimited
	case http.StatusServiceUnavailable, StatusOverloaded:
		// 529 is "overloaded" (Anthropic, and proxies in front of other
		// providers): transient like a 503, whichever adapter sees it.
		return KindUnavailable
	case http.StatusGatewayTimeout:
		return KindGatewayTimeout
	case http.StatusFailedDependency:
		// TGI (and servers on its router: LoRAX, Hugging Face Inference
		// Endpoints) answers a generation that failed — CUDA out of
		// memory, a shard that died — with 424 and error_type
		// "generation": the server's own failure, as the same error in
		// its stream is (typeKind), not a proxy's or base_url's status.
		return KindServerError
	}
	switch {
	case status >= 500 && contextLengthStated(code, typ, msg):
		// llama.cpp before late 2025 answers a prompt past its context
		// with 500 exceed_context_size_error (and names 500 in the error
		// event of a stream): the request, on this target, not a failure
		// of the server a retry would get past. Only an error that says so
		// in so many words: a server failure whose message merely mentions
		// a context window stays a retried server_error.
		return KindContextLength
	case status >= 500:
		return KindServerError
	case status >= 400:
		// Another 4xx (405, 410, 415, 421, 451…) is what a proxy, a wrong
		// base_url or a redirect followed as a GET answers, not a verdict on
		// the request: the target's configuration, failed over.
		return KindMisconfigured
	}
	return KindUnknownProvider
}

// streamedStatus is the HTTP status an error event inside a stream names as
// its code (OpenRouter's {"error": {"code": 429, ...}}), when it is one that
// says what to do next whatever the stream sent before: a rate limit (429), an
// exhausted quota (402), a timeout (408: failed over, as an HTTP 408 is) or a
// server's failure (5xx). Other
// codes (a 400 after tokens were sent is no verdict on the request) are left to
// the error's type and message; 0 when none applies. Before any of the
// answer, every 4xx or 5xx code is taken as its HTTP status (openingStatus).
func streamedStatus(code string) int {
	n, err := strconv.Atoi(code)
	if err != nil {
		return 0
	}
	switch {
	case n == http.StatusTooManyRequests, n == http.StatusPaymentRequired, n == http.StatusRequestTimeout, n >= 500 && n < 600:
		return n
	}
	return 0
}

// contextLength reports an error that says the prompt (with the answer's
// room) does not fit the model's context, in the words of the servers the
// router meets: OpenAI's code and message, Anthropic's "prompt is too long",
// llama.cpp's exceed_context_size_error ("the request exceeds the available
// context size"), Gemini's OpenAI-compatible "The input token count (X)
// exceeds the maximum number of tokens allowed (Y)", and TGI's (and
// Together's) "Input validation error: `inputs` tokens + `max_new_tokens`
// must be <= N" or "`inputs` must have less than N tokens", vLLM's (V1) "The
// decoder prompt (length N) is longer than the maximum model length of M"
// and xAI's "This model's maximum prompt length is N but the request
// contains M tokens".
func contextLength(code, typ, msg string) bool {
	if code == "context_length_exceeded" || code == "exceed_context_size_error" || typ == "exceed_context_size_error" {
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "maximum context length") || strings.Contains(m, "context length") ||
		strings.Contains(m, "context window") || strings.Contains(m, "prompt is too long") ||
		strings.Contains(m, "context limit") || strings.Contains(m, "exceed context") ||
		strings.Contains(m, "available context size") ||
		strings.Contains(m, "input token count") && strings.Contains(m, "exceeds the maximum number of tokens") ||
		strings.Contains(m, "`inputs` tokens + `max_new_tokens` must be") ||
		strings.Contains(m, "`inputs` must have less than") ||
		strings.Contains(m, "longer than the maximum model length") ||
		strings.Contains(m, "maximum prompt length is")
}

// contextLengthStated is contextLength for a 5xx: the codes and types that
// say a prompt exceeds the context, and the few phrases that say so outright,
// not any message that mentions a context window or length. Older vLLM
// answered its "… is longer than the maximum model length of M" with 500.
func contextLengthStated(code, typ, msg string) bool {
	if code == "context_length_exceeded" || code == "exceed_context_size_error" || typ == "exceed_context_size_error" {
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "maximum context length") || strings.Contains(m, "exceeds the available context size") ||
		strings.Contains(m, "request exceeds the available context") || strings.Contains(m, "exceeds the context length") ||
		strings.Contains(m, "input token count") && strings.Contains(m, "exceeds the maximum number of tokens") ||
		strings.Contains(m, "longer than the maximum model length")
}

// requestKind splits a rejected request: context length, content policy, or a
// plain bad request — or a generation that failed (failedGeneration), which
// some providers report with the request's status and type, or a refusal of
// what the router chose rather than the caller: the model sent
// (modelRefused), the router's credentials, the stream_options the adapter
// adds (streamOptionsRefused).
func requestKind(code, typ, msg string) Kind {
	m := strings.ToLower(msg)
	switch {
	case failedGeneration(code, msg):
		// The model's generation failed (Groq's tool_use_failed,
		// json_validate_failed): the provider's, not the request's.
		return KindMalformedResponse
	case contextLength(code, typ, msg):
		return KindContextLength
	case contentPolicy(code, msg):
		return KindContentPolicy
	case modelRefused(code, typ, m):
		// OpenRouter's and LiteLLM's 400 for a model id they do not
		// serve, OpenAI's model_not_found in a 400 or a stream: the
		// router's configuration, as a 404 is.
		return KindModelNotFound
	case streamOptionsRefused(m):
		return KindMisconfigured
	case code == "invalid_api_key" || code == "API_KEY_INVALID" || strings.Contains(m, "api key not valid") ||
		strings.Contains(m, "invalid api key") || strings.Contains(m, "incorrect api key") ||
		accountRestricted(code):
		// Some OpenAI-compatible APIs (Gemini's) refuse a bad key with 400
		// INVALID_ARGUMENT: the router's credentials, not the caller's
		// request — fail over, count against the breaker, hide the text.
		// So does Groq's 400 organization_restricted: the router's account.
		return KindAuth
	}
	if k, ok := accountRefusal(msg); ok {
		// Anthropic's "Your credit balance is too low" and "This
		// organization has been disabled.", also through its
		// OpenAI-compatible endpoint, with 400: the router's account.
		return k
	}
	return KindBadRequest
}

// contentPolicy reports an error whose code or message says the provider
// refused the request's content: a content-policy code (OpenAI's
// content_policy_violation and invalid_prompt, Azure's content_filter and
// ResponsibleAIPolicyViolation), a message naming a content policy or a
// safety system — Anthropic's output filter says "Output blocked by content
// filtering policy", as a 400 invalid_request_error or an error event in the
// stream —, DeepSeek's moderation refusal, a 400 invalid_request_error
// "Content Exists Risk", or a moderation refusal (moderationFlagged).
func contentPolicy(code, msg string) bool {
	if code == "content_policy_violation" || code == "content_filter" ||
		code == "ResponsibleAIPolicyViolation" || code == "invalid_prompt" {
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "content policy") || strings.Contains(m, "content management policy") ||
		strings.Contains(m, "content filtering policy") || strings.Contains(m, "blocked by content filter") ||
		strings.Contains(m, "safety system") || strings.Contains(m, "content exists risk") || moderationFlagged(m)
}

// moderationFlagged reports a lower-cased message that says a moderation
// check flagged the request's content: OpenRouter's 403 "Your chosen model
// requires moderation and your input was flagged for …" (its error.metadata,
// reasons and flagged_input, is dropped by go-openai's decoding, so the
// message, which OpenRouter documents, is what is read), and the same refusal
// worded as the input, prompt or content being flagged. It is narrow on
// purpose: a 403 that merely says "flagged" ("your account has been flagged")
// or "moderation" is about the account, the router's, and stays auth.
func moderationFlagged(m string) bool {
	return strings.Contains(m, "requires moderation") ||
		strings.Contains(m, "input was flagged") || strings.Contains(m, "prompt was flagged") ||
		strings.Contains(m, "content was flagged") ||
		strings.Contains(m, "flagged by moderation") || strings.Contains(m, "flagged by the moderation")
}

// typeKind classifies an in-stream error event by its type and code. TGI's
// error_type is one of validation (the request: its 422), overloaded (its
// 429), generation and incomplete_generation (the server's).
func typeKind(code, typ, msg string) Kind {
	request := typ == "invalid_request_error" || typ == "validation"
	// A server's own failure (type server_error, api_error, …) is context
	// length only when it says so outright, as a 5xx is (classify).
	if typ != "" && !request && contextLength(code, typ, msg) && !contextLengthStated(code, typ, msg) {
		return KindServerError
	}
	if k := requestKind(code, typ, msg); k != KindBadRequest {
		return k
	}
	switch {
	case quotaCode(code, typ):
		return KindQuotaExceeded
	case rateLimitCode(code, typ) || typ == "overloaded":
		return KindRateLimited
	case request:
		return KindBadRequest
	case typ == "authentication_error" || typ == "permission_error":
		return KindAuth
	case typ == "not_found_error" || code == "model_not_found":
		return KindModelNotFound
	case typ == "overloaded_error":
		return KindUnavailable
	}
	return KindServerError
}

// classifyTransport handles errors with no HTTP response: context, network,
// TLS, decoding and go-openai's own request validation.
func classifyTransport(provider string, err error) *Error {
	var (
		dnsErr  *net.DNSError
		opErr   *net.OpError
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		uaErr   x509.UnknownAuthorityError
		hostErr x509.HostnameError
		synErr  *json.SyntaxError
		typErr  *json.UnmarshalTypeError
	)
	kind, msg := KindUnknownProvider, netredact.ErrorText(err)
	switch {
	case errors.Is(err, context.Canceled):
		kind, msg = KindCancelled, "call cancelled by the router"
	case errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		kind, msg = KindTimeout, "deadline passed before the provider answered"
	case errors.Is(err, syscall.ECONNREFUSED):
		kind, msg = KindConnRefused, "connection refused"
	case errors.As(err, &dnsErr) && hostNotFound(dnsErr):
		kind, msg = KindMisconfigured, "the host name does not resolve: check base_url (DNS lookup failed: "+dnsErr.Err+")"
	case errors.As(err, &dnsErr):
		kind, msg = KindConnRefused, "DNS lookup failed: "+dnsErr.Err
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		kind, msg = KindConnReset, "connection reset before a complete response"
	case isHTTP2Reset(err):
		kind, msg = KindConnReset, "connection reset before a complete response: "+netredact.ErrorText(err)
	case errors.As(err, &certErr), errors.As(err, &uaErr), errors.As(err, &hostErr):
		kind, msg = KindMisconfigured, "TLS verification failed: "+netredact.ErrorText(err)
	case errors.As(err, &synErr), errors.As(err, &typErr), undecodableBody(err):
		kind, msg = KindMalformedResponse, "response body does not decode: "+netredact.ErrorText(err)
	case isClientValidation(err):
		kind, msg = KindMisconfigured, "request rejected by the client library: "+err.Error()
	case notHTTP(err):
		kind, msg = KindMisconfigured, "the server at the target's base_url does not answer as an HTTP API: an operator must check its base_url ("+netredact.ErrorText(err)+")"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		kind, msg = KindConnRefused, "could not connect: "+netredact.ErrorText(opErr)
	case errors.As(err, &opErr):
		kind, msg = KindConnReset, "network error: "+netredact.ErrorText(opErr)
	}
	e := NewError(provider, kind, truncate(msg))
	if errors.As(err, &dnsErr) && hostNotFound(dnsErr) {
		e.Code = CodeHostNotFound
	}
	return e
}

// notHTTPErrors are net/http's words for a response that is not HTTP: a
// server at base_url that speaks another protocol (an SSH or SMTP banner, a
// database's port), a status line or header that is not HTTP's, headers
// past the client's bound (the adapters' transport reports those as
// response_too_large first: headersTooLarge). net/http's errors for them are
// not exported types, so they are known by their text.
var notHTTPErrors = []string{
	"malformed HTTP response",
	"malformed HTTP status code",
	"malformed HTTP version",
	"malformed MIME header",
	"response headers exceeded",
}

// notHTTP reports net/http's refusal of a response that is not HTTP
// (notHTTPErrors): the target's base_url, not the network and not the
// provider (kind unknown before). Received stays false: no answer came.
func notHTTP(err error) bool {
	s := err.Error()
	for _, w := range notHTTPErrors {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// undecodableBody reports a response body whose Content-Encoding does not
// decode: net/http asks for gzip and decodes it itself, so a provider (or a
// proxy) that declares gzip and sends something else, or corrupt gzip, fails
// the body's read with one of these. The response's headers came: the
// provider answered, with a body that cannot be read (adapters say so with
// the status, and mark the failure received).
func undecodableBody(err error) bool { return undecodableCause(err) != nil }

// undecodableCause is the decoding's own error in err's chain (without the
// client library's "error reading response body: " around it), nil when
// there is none.
func undecodableCause(err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, gzip.ErrHeader):
		return gzip.ErrHeader
	case errors.Is(err, gzip.ErrChecksum):
		return gzip.ErrChecksum
	case errors.As(err, &corrupt):
		return corrupt
	}
	return nil
}

// undecodableMessage is the message of a failure on a response body that does
// not decode (undecodableBody), for a response with status.
func undecodableMessage(status int, err error) string {
	what := "response"
	if status >= 400 {
		what = "error response"
	}
	return fmt.Sprintf("HTTP %d %s body does not decode: %s", status, what, undecodableCause(err))
}

// isHTTP2Reset reports an HTTP/2 stream reset by the provider (RST_STREAM:
// "stream error: stream ID 1; INTERNAL_ERROR; received from peer") or a
// connection that went away under the stream (GOAWAY, "http2: client
// connection lost"): the HTTP/2 form of a TCP reset. net/http's HTTP/2 error
// types are not exported, so they are known by their text.
func isHTTP2Reset(err error) bool {
	s := err.Error()
	return strings.Contains(s, "stream error: stream ID") && strings.Contains(s, "received from peer") ||
		strings.Contains(s, "http2: client connection lost") ||
		strings.Contains(s, "http2: server sent GOAWAY")
}

// isClientValidation reports go-openai's local request checks (model and
// parameter combinations it refuses to send): our configuration, not the caller's.
func isClientValidation(err error) bool {
	for _, target := range []error{
		openai.ErrChatCompletionInvalidModel,
		openai.ErrChatCompletionStreamNotSupported,
		openai.ErrReasoningModelMaxTokensDeprecated,
		openai.ErrReasoningModelLimitationsLogprobs,
		openai.ErrReasoningModelLimitationsOther,
		openai.ErrReasoningEffortUnsupported,
		openai.ErrReasoningSamplingUnsupported,
		openai.ErrReasoningToolsRequireResponses,
		openai.ErrO1BetaLimitationsMessageTypes,
		openai.ErrO1BetaLimitationsTools,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// bodyError reads an error response body go-openai could not decode as
// {"error": {...}}: the code, type and message of the error it holds in
// another common shape —
//
//   - {"error": "text"} (TGI, LM Studio, many proxies), with TGI's
//     "error_type";
//   - [{"error": {...}}] (Gemini's OpenAI-compatible endpoint);
//   - {"error": {...}} whose members go-openai refuses;
//   - {"message": "…", "type": …, "code": …} (vLLM's older servers and
//     others).
//
// Any other body (plain text, FastAPI's {"detail": "Not Found"}) is the
// message as it is; HTML from a proxy is described, not quoted (Classify,
// pageMessage).
func bodyError(body []byte) (code, typ, msg string) {
	code, typ, msg, _ = decodeBodyError(body)
	return code, typ, msg
}

// decodeBodyError is bodyError, with found true when the body held an API's
// error in one of the shapes bodyError reads.
func decodeBodyError(body []byte) (code, typ, msg string, found bool) {
	msg = strings.TrimSpace(string(body))
	var v any
	if json.Unmarshal(body, &v) != nil {
		return "", "", msg, false
	}
	if list, ok := v.([]any); ok && len(list) > 0 {
		v = list[0]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", "", msg, false
	}
	switch e := obj["error"].(type) {
	case string:
		if strings.TrimSpace(e) != "" {
			t, _ := obj["error_type"].(string)
			return jsonCode(obj["code"]), t, e, true
		}
	case map[string]any:
		obj = e
	}
	m, _ := obj["message"].(string)
	if strings.TrimSpace(m) == "" {
		return "", "", msg, false
	}
	t, _ := obj["type"].(string)
	if t == "" {
		t, _ = obj["status"].(string) // Gemini: "INVALID_ARGUMENT"
	}
	return jsonCode(obj["code"]), t, m, true
}

// bodyParam is the param of the error an error response body holds, in the
// shapes decodeBodyError reads ("" when it names none): OpenAI's error.param,
// which go-openai leaves unread when it cannot decode the body.
func bodyParam(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if list, ok := v.([]any); ok && len(list) > 0 {
		v = list[0]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if e, ok := obj["error"].(map[string]any); ok {
		obj = e
	}
	p, _ := obj["param"].(string)
	return p
}

// jsonCode is an error code decoded from JSON as text: a string, or a number
// as written (0 and null are none).
func jsonCode(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case float64:
		if c == 0 {
			return ""
		}
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return ""
}

func apiCode(e *openai.APIError) string {
	if e.InnerError != nil && e.InnerError.Code != "" {
		return e.InnerError.Code
	}
	switch c := e.Code.(type) {
	case nil:
		return ""
	case string:
		return c
	case int:
		if c == 0 { // go-openai decodes "code": null as the integer 0
			return ""
		}
		return fmt.Sprint(c)
	default:
		return fmt.Sprint(c)
	}
}

func truncate(s string) string {
	s = strings.TrimSpace(jsontext.SanitizeString(s)) // a provider's text must be storable
	if len(s) <= maxMessage {
		return s
	}
	return cutAt(s, maxMessage) + "…"
}

// truncateTo is s made storable and cut to at most n bytes (on a UTF-8
// boundary).
func truncateTo(s string, n int) string {
	s = strings.TrimSpace(jsontext.SanitizeString(s))
	if len(s) <= n {
		return s
	}
	return cutAt(s, n)
}

// cutAt is s's longest prefix of at most n bytes that ends on a rune boundary.
func cutAt(s string, n int) string {
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
