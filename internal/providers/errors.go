package providers

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Fault says who is at fault for a failed call. It is kept apart from Action: what
// went wrong does not by itself decide what to do next.
type Fault string

const (
	FaultCaller   Fault = "caller"   // the request itself is wrong (400, context too long, content policy)
	FaultProvider Fault = "provider" // the provider misbehaved (5xx, 429, bad output, cut stream)
	FaultNetwork  Fault = "network"  // the call did not get through (refused, reset, DNS)
	FaultRouter   Fault = "router"   // our own configuration or code (bad API key config, bad template)
)

// Action says what the router may do next after a failed call.
type Action string

const (
	// ActionRetry: the same provider may be tried again after RetryAfter (or backoff).
	ActionRetry Action = "retry"
	// ActionFailover: do not retry this provider for this job; another may succeed.
	ActionFailover Action = "failover"
	// ActionStop: no provider will do better; report to the caller.
	ActionStop Action = "stop"
)

// Kind names the failure precisely, for logs, metrics and the job resource.
type Kind string

const (
	KindBadRequest        Kind = "bad_request"
	KindContextLength     Kind = "context_length_exceeded"
	KindContentPolicy     Kind = "content_policy"
	KindAuth              Kind = "auth"
	KindModelNotFound     Kind = "model_not_found"
	KindRequestTimeout    Kind = "request_timeout" // HTTP 408 from the provider
	KindConflict          Kind = "conflict"
	KindRateLimited       Kind = "rate_limited"
	KindQuotaExceeded     Kind = "quota_exceeded" // our account's quota or billing (429 insufficient_quota, 402): not transient
	KindServerError       Kind = "server_error"
	KindUnavailable       Kind = "unavailable"
	KindGatewayTimeout    Kind = "gateway_timeout" // HTTP 504
	KindConnRefused       Kind = "connection_refused"
	KindConnReset         Kind = "connection_reset"
	KindTimeout           Kind = "timeout" // our deadline passed: outcome unknown
	KindStreamStalled     Kind = "stream_stalled"
	KindStreamCut         Kind = "stream_cut"
	KindStreamMalformed   Kind = "stream_malformed"
	KindStreamTimeout     Kind = "stream_timeout" // the attempt's timeout passed after the provider began answering
	KindEmptyResponse     Kind = "empty_response"
	KindMalformedResponse Kind = "malformed_response" // a non-streamed answer that does not decode
	KindCancelled         Kind = "cancelled"          // the router cancelled the call (hedge loser, job cancelled)
	KindMisconfigured     Kind = "misconfigured"
	KindUnknownProvider   Kind = "unknown"
	// KindResponseTooLarge: the answer (body or whole stream) passed the
	// provider's max_response_bytes; it is discarded, not truncated.
	KindResponseTooLarge Kind = "response_too_large"
	// KindAdapterPanic: the adapter panicked on what the provider sent (a
	// router bug the provider exposed); the attempt fails, the process lives.
	KindAdapterPanic Kind = "adapter_panic"
)

// Error is the one error type every adapter returns. Construct with the fields
// known; Classify fills the rest for errors that come from go-openai or net/http.
type Error struct {
	Provider   string
	Kind       Kind
	Fault      Fault
	Action     Action
	StatusCode int    // HTTP status, 0 when no response arrived
	Code       string // the provider's own error code or type, when it sent one
	// Param is the request member the provider's error names (OpenAI's
	// error.param: "messages.[0].content", "tools[0].function.description"),
	// when it sent one: echoed to a chat caller with the provider's code when
	// the provider refused the request. Clipped to maxParam (ClipIdent).
	Param   string
	Message string // human-readable; never contains the prompt
	// ProviderMessage is the provider's own message where Message replaces
	// it because tenants must not see it (a refused credential: the
	// provider's words may quote part of the router's key). For the
	// router's log only.
	ProviderMessage string
	// ProviderRequestID is the provider's id of the request that failed
	// (Anthropic's request-id header or body request_id, an
	// OpenAI-compatible provider's x-request-id header), when a response
	// said it: what an operator quotes to the provider's support about a
	// 500 or a 529. Stored with the attempt's error (provider_request_id),
	// never in Message. Clipped to maxRequestID (ClipIdent).
	ProviderRequestID string
	RetryAfter        time.Duration
	// OutcomeUnknown is true when the request may have reached the provider and
	// been processed, but no answer came back (a timeout after sending). Such an
	// attempt is `unknown`, not `failed` (SPEC §6.7).
	OutcomeUnknown bool
	// Received is true when response bytes had arrived before the call failed:
	// the provider answered, so a deadline or cancellation afterwards leaves a
	// known outcome (SPEC §15).
	Received bool
	// AnsweredWithError is true when the provider reported the failure
	// with an error object inside a 200 stream rather than the stream
	// breaking off: Anthropic's `error` event before message_start
	// (overloaded_error, api_error), an OpenAI-compatible `data: {"error": …}` line or error chunk before
	// any chunk of the answer. Received is true too (the stream's headers
	// came), but like an error status it says the provider refused the
	// request rather than cut an answer it had begun: nothing was billed
	// that the router knows of beyond Usage, so the race estimates no usage
	// for it. An error after the answer began is not marked: Anthropic's
	// after message_start carries the usage message_start reported, or is
	// estimated when that reported no input; an OpenAI-compatible one after
	// chunks of the answer leaves its prompt estimated as for a cut stream.
	AnsweredWithError bool
	// NotSent is true when the call ended (a deadline or a cancellation)
	// before its request was written whole to the provider — no connection
	// was made, or the provider had not read all of the body: the provider
	// never had the request, so cannot have done the work, whatever cut it.
	NotSent bool
	// Usage is set when the call fails on a complete answer the provider
	// billed (a refusal, a content filter, a paused turn, no choices): the
	// tokens it reported for that answer. Nil when no such answer came or
	// it reported none. The router records it on the attempt, so the
	// attempt's tokens and cost count like any billed answer's (SPEC §18);
	// see billed. ResponseID and ResponseModel are that answer's id and
	// model, when it had them, recorded with it.
	Usage         *Usage
	ResponseID    string
	ResponseModel string
	// Partial is the part of a streamed answer that had arrived when the
	// stream failed or was cancelled without usage (Usage nil), or with an
	// output count the provider had not yet made final (Anthropic's
	// message_start reports output_tokens 1 before any is generated; the
	// count comes in message_delta at the end): its
	// reasoning (reasoning_content or reasoning), content, refusal, and tool
	// calls' names and arguments, as received.
	// The provider billed those output tokens all the same (a hedge loser
	// cancelled mid-stream, a stream cut, stalled or timed out): the race
	// counts them as the attempt's estimated completion tokens
	// (estimatedUsage). Bounded by the provider's max_response_bytes, as
	// the stream is. Never shown to the caller or logged.
	Partial string
	// Answer is the text of the complete answer a billed failure was built
	// from (billed: a refusal, a content filter, a finish or stop reason
	// that does not say the answer is whole, a malformed or missing tool
	// call, a paused turn), streamed or not: its reasoning, content,
	// refusal, and tool calls' names and arguments, joined as Partial's
	// are (withAnswer). The provider generated and billed it at the output
	// price: the race counts it where Usage leaves a hole — no usage, a
	// total with no split, or a completion count of 0 next to the text —
	// as it counts a winner's answer (billedUsage, estimatedUsage), and
	// never over a count the provider gave. Bounded by the provider's
	// max_response_bytes, as the answer is. Never shown to the caller or
	// logged.
	Answer string
	Err    error // the cause, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("provider %s: %s", e.Provider, e.Kind)
	if e.StatusCode != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ClipIdent is s, an identifier a provider sent (an error's code or param),
// made fit to store and to echo to a caller: only its printable characters
// (a control character, invalid UTF-8 or any other is dropped), trimmed, cut
// to at most n bytes on a character's boundary. A provider's identifiers are
// short; one that is not is the provider's misbehaviour, and is not carried
// whole into the job or an answer.
func ClipIdent(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > n {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// maxRequestID bounds Error.ProviderRequestID: a provider's request ids are
// short (Anthropic's "req_011C…", OpenAI's "req_" and 32 hex digits).
const maxRequestID = 128

// requestIDHeaders are the response headers that carry a provider's id of
// the request, in the order they are read: OpenAI's and most
// OpenAI-compatible servers' x-request-id, then Anthropic's request-id.
var requestIDHeaders = []string{"X-Request-Id", "Request-Id"}

// responseRequestID is the provider's id of the request in h (nil: none),
// clipped (ClipIdent), or "".
func responseRequestID(h http.Header) string {
	for _, k := range requestIDHeaders {
		if id := ClipIdent(h.Get(k), maxRequestID); id != "" {
			return id
		}
	}
	return ""
}

// withRequestID sets e's ProviderRequestID, when it has none, to id: the
// provider's id of the request the call's response named
// (callTrace.providerRequestID; "" leaves it unset).
func (e *Error) withRequestID(id string) *Error {
	if e != nil && e.ProviderRequestID == "" {
		e.ProviderRequestID = id
	}
	return e
}

// withPartial gives the *Error in err's chain, when it reports no usage or
// only a provisional output count (provisional), the part of a streamed
// answer that had come (partial, called only then): see Error.Partial. A
// provider's final usage is the attempt's, and nothing is estimated over it.
func withPartial(err error, partial func() string, provisional bool) {
	if pe, ok := AsError(err); ok && (pe.Usage == nil || provisional) && pe.Partial == "" {
		pe.Partial = partial()
	}
}

// AsError finds the *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var pe *Error
	if errors.As(err, &pe) {
		return pe, true
	}
	return nil, false
}
