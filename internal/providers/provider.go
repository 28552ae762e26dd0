// Package providers owns the adapter contract between the router and the model
// providers it calls: the small Provider interface, the optional capabilities found
// by type assertion, the OpenAI-compatible and scripted adapters, and the one error
// taxonomy every adapter reports in.
//
// It must not touch the database, job state or routing policy: an adapter makes one
// call and classifies what happened; deciding what to do next belongs to
// internal/race.
//
// # Errors
//
// Every failed call returns an *Error (see Classify, ClassifyStatus, NewError):
// Kind names the failure, Fault says who is to blame (caller, provider, network,
// router) and Action says what the router may do next (retry the same provider,
// fail over, stop). OutcomeUnknown marks a call that may have been processed
// although no answer came back (a deadline passing after the request was sent).
//
// # Scripted directives
//
// The scripted provider (NewScripted) reads directives from the last user message
// of a request. A line of the form
//
//	#scripted: <directive> [<directive> ...]
//
// (leading spaces allowed, several such lines merge) changes the scripted step
// of that one call: a directive naming an outcome (output, status, error, hang,
// cut, stall, malformed) replaces the scripted outcome; latency, model and
// retry_after only adjust it.
// A line `#scripted@<provider>: ...` applies only to the scripted provider of that
// name. Directives are separated by spaces:
//
//	status=<code>       fail as the taxonomy classifies that HTTP status (2xx answers)
//	retry_after=<dur>   Retry-After for status= or error= (2s, 1500ms, or seconds: 2)
//	latency=<dur>       wait before answering (time.ParseDuration syntax: 300ms, 2s)
//	hang                block until the context ends (timeout: outcome unknown)
//	cut                 deliver half the output, then fail with stream_cut
//	stall               deliver half the output, then fail with stream_stalled
//	malformed           deliver half the output, then fail with stream_malformed
//	model=<name>        report this answering model
//	error=<kind>        fail with that taxonomy kind (e.g. content_policy)
//	output=<text>       answer with the rest of the line, spaces included
//
// For example `#scripted: latency=300ms output={"a":1}` or
// `#scripted: status=429 retry_after=2s`. An unknown or malformed directive fails
// the call with bad_request, saying which directive and the syntax.
package providers

import (
	"context"
	"encoding/json"
	"time"
)

// Message is one chat message of a rendered request. Tool calls and tool
// results of a conversation that uses tools are carried as the provider's wire
// shapes (OpenAI's), untouched.
type Message struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`   // assistant messages that called tools
	ToolCallID string          `json:"tool_call_id,omitempty"` // tool messages: the call they answer
	// Refusal is an assistant message's refusal, as OpenAI's answer had it
	// ("": none); left out of the stored intent when empty.
	Refusal string `json:"refusal,omitempty"`
	// ReasoningContent is an assistant message's reasoning, as the
	// provider's answer had it ("": none); sent back only by an OpenAI
	// adapter with SendReasoningContent (others refuse the member), and
	// left out of the stored intent when empty.
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// ResponseFormat asks the provider for structured output. A nil format is plain text.
type ResponseFormat struct {
	// Type is "json_schema" or "json_object".
	Type string
	// Name, Description and Schema apply to "json_schema"; Description
	// ("": none) tells the model what the format is for.
	Name        string
	Description string
	Schema      []byte // raw JSON Schema document
	Strict      bool
}

// Request is one fully rendered call. The router never sends a template.
type Request struct {
	// AttemptID is the router's attempt id; adapters that support provider-side
	// idempotency or lookup carry it in the form that provider defines.
	AttemptID string
	// JobID is the job the attempt belongs to (for logs and metadata).
	JobID string
	// Model overrides the provider's configured model when non-empty.
	Model       string
	Messages    []Message
	Temperature *float32
	// TopP (nucleus sampling) is OpenAI's; the Anthropic adapter does not
	// send it. Stop (up to four stop sequences) goes to Anthropic as
	// stop_sequences.
	TopP           *float32
	Stop           []string
	MaxTokens      int
	Seed           *int
	User           string
	ResponseFormat *ResponseFormat
	// Tools and ToolChoice are passed through as OpenAI's JSON (nil: none).
	Tools      json.RawMessage
	ToolChoice json.RawMessage
	// PresencePenalty and FrequencyPenalty (0: none, OpenAI's default),
	// LogitBias (token id to bias; nil: none) and ReasoningEffort ("": the
	// model's default) are OpenAI's; the Anthropic adapter does not send them.
	PresencePenalty  float32
	FrequencyPenalty float32
	LogitBias        map[string]int
	ReasoningEffort  string
	// ParallelToolCalls is OpenAI's parallel_tool_calls (nil: the provider's
	// default, which is to allow them); only set with Tools. The Anthropic
	// adapter sends false as tool_choice's disable_parallel_tool_use.
	ParallelToolCalls *bool
	// Verbosity ("": the model's default) and ChatTemplateKwargs (a JSON
	// object for the server's chat template, vLLM's and SGLang's; nil: none)
	// are sent to OpenAI-compatible providers only: the Anthropic adapter
	// refuses a request that sets either (badParameter).
	Verbosity          string
	ChatTemplateKwargs json.RawMessage
	// ServiceTier ("": the provider's default, which for OpenAI is "auto"),
	// SafetyIdentifier and PromptCacheKey ("": none) are OpenAI's
	// service_tier, safety_identifier and prompt_cache_key, sent to
	// OpenAI-compatible providers only; the Anthropic adapter leaves them
	// out (its service_tier takes other values, and it has neither of the
	// others).
	ServiceTier      string
	SafetyIdentifier string
	PromptCacheKey   string
}

// Usage is token usage as the provider reported it.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails and CompletionTokensDetails are the breakdown an
	// OpenAI-compatible provider reported (cached and audio prompt tokens;
	// reasoning, audio and accepted and rejected prediction tokens), passed
	// on in the completion's usage, which always names them (chat.Usage).
	// In an attempt's stored usage they are left out when zero, as every
	// attempt stored before they were carried has them.
	PromptTokensDetails     PromptTokensDetails     `json:"prompt_tokens_details,omitzero"`
	CompletionTokensDetails CompletionTokensDetails `json:"completion_tokens_details,omitzero"`
	// Estimated marks usage the router counted itself, for an attempt whose
	// request was sent and whose answer it never read (a cancelled hedge
	// loser, an unknown attempt: the prompt's tokens, by the target's
	// tokenizer) or whose answer came with no usage at all (the prompt and
	// the answer). Set by an adapter only for an output count its provider
	// left provisional (Anthropic: a whole stream whose message_delta gave
	// none, estimated at 4 bytes a token and recounted by the race's
	// answerUsage).
	Estimated bool `json:"estimated,omitempty"`
}

// PromptTokensDetails is OpenAI's usage.prompt_tokens_details, as far as
// the router carries it. AudioTokens is left out of the attempt's stored
// usage when zero, so what is stored for an attempt that reported none is
// as before it was carried (the completion always names every member:
// chat.Usage).
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
	AudioTokens  int `json:"audio_tokens,omitempty"`
}

// CompletionTokensDetails is OpenAI's usage.completion_tokens_details, as far
// as the router carries it; the members after ReasoningTokens are left out
// when zero, as AudioTokens of PromptTokensDetails is.
type CompletionTokensDetails struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens,omitempty"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens,omitempty"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens,omitempty"`
}

// Response is one complete answer. An adapter returns a Response only for a
// complete answer; a cut, stalled or malformed stream is an *Error.
type Response struct {
	Content      string
	Model        string // the model the provider says answered
	ResponseID   string // the provider's own response id
	FinishReason string
	Created      time.Time
	Usage        Usage
	// FirstByte is the time to the response's first byte, when the adapter
	// measured it (0: not measured); adaptive hedging learns from it.
	FirstByte time.Duration
	// ToolCalls are the tool calls of the answer, as OpenAI's JSON array (nil:
	// none). An answer with tool calls may have no content.
	ToolCalls json.RawMessage
	// SystemFingerprint is the provider's system_fingerprint ("": none).
	SystemFingerprint string
	// ReasoningContent is the model's reasoning as the provider returned it
	// beside the answer (reasoning_content: DeepSeek's reasoner, vLLM's and
	// SGLang's reasoning parsers; "": none), sanitised for storage. It is
	// not the answer: nothing judges it, and usage already counts it.
	ReasoningContent string
	// ServiceTier is the service_tier the provider says served the call
	// (OpenAI: "default", "flex", "priority"…; "": none), sanitised and
	// clipped (providerServiceTier).
	ServiceTier string
	// CutAtStop is what the adapter cut away from the answer at a stop
	// sequence it applied itself (the Anthropic adapter's whitespace-only
	// stops, cutAtStops): the content from the match on, then the dropped
	// tool calls' JSON ("": nothing cut). It is not the answer, but the
	// provider generated and billed it: the race counts it when it
	// estimates the answer's output tokens.
	CutAtStop string
}

// Provider is the one call every adapter makes: send a rendered request, return a
// complete response or a classified error (an *Error, see Classify).
type Provider interface {
	Name() string
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Streamer is implemented by adapters that can consume the provider's streaming
// API. The adapter consumes the stream to its end and assembles it; onDelta (may be
// nil) sees each content delta as it arrives, for observability only.
type Streamer interface {
	CompleteStream(ctx context.Context, req *Request, onDelta func(string)) (*Response, error)
}

// Looker is implemented by adapters whose provider can be asked, after the fact,
// what became of a request sent under a given attempt id (reconciliation of
// unknown attempts). found=false means the provider has no record of it.
type Looker interface {
	Lookup(ctx context.Context, attemptID string) (resp *Response, found bool, err error)
}

// IdempotentProvider is implemented by adapters whose provider honours an
// idempotency key of its own definition. The router then passes the attempt id.
type IdempotentProvider interface {
	SupportsIdempotencyKey() bool
}

// LookupCapability is implemented by adapters that implement Looker but can only
// look up when configured to (the OpenAI adapter needs SupportsLookup, which
// stores completions with the attempt id as metadata). Use LookerOf rather than a
// bare type assertion.
type LookupCapability interface {
	SupportsLookup() bool
}

// LookerOf returns p's Looker when p can actually look up: p implements Looker
// and, if it also implements LookupCapability, SupportsLookup() is true.
func LookerOf(p Provider) (Looker, bool) {
	l, ok := p.(Looker)
	if !ok {
		return nil, false
	}
	if c, ok := p.(LookupCapability); ok && !c.SupportsLookup() {
		return nil, false
	}
	return l, true
}
