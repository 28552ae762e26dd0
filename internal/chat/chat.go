// Package chat owns the OpenAI Chat Completions shapes the router speaks on
// POST /v1/chat/completions (SPEC §4.3): the request it accepts, its normalised
// form stored as a job's input (the intent), how a winning answer is judged, and
// the completion object stored as the job's result so that every replay is
// byte-identical.
//
// It must not touch the database, HTTP or the race: internal/api parses with it,
// internal/race runs and judges with it.
package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/providers"
)

// OperationPrefix marks chat jobs: their operation is "chat:<route>".
const OperationPrefix = "chat:"

// Operation is the job operation of a chat completion on route.
func Operation(route string) string { return OperationPrefix + route }

// Route returns the route of a chat operation, and whether it is one.
func Route(operation string) (string, bool) { return strings.CutPrefix(operation, OperationPrefix) }

// Input is the normalised intent of a chat completion request: what is sent
// to providers. Streaming options are not part of it (a streamed and a plain
// call of the same intent are the same job).
type Input struct {
	// Model, when set, is passed through to the route's providers instead of
	// their configured model (a route's `models` alias).
	Model          string              `json:"model,omitempty"`
	Messages       []providers.Message `json:"messages"`
	Temperature    *float32            `json:"temperature,omitempty"`
	TopP           *float32            `json:"top_p,omitempty"`
	Stop           []string            `json:"stop,omitempty"`
	MaxTokens      int                 `json:"max_tokens,omitempty"`
	Seed           *int                `json:"seed,omitempty"`
	User           string              `json:"user,omitempty"`
	ResponseFormat *ResponseFormat     `json:"response_format,omitempty"`
	Tools          json.RawMessage     `json:"tools,omitempty"`
	ToolChoice     json.RawMessage     `json:"tool_choice,omitempty"`
	// PresencePenalty and FrequencyPenalty: 0 is none (OpenAI's default).
	PresencePenalty  float32        `json:"presence_penalty,omitempty"`
	FrequencyPenalty float32        `json:"frequency_penalty,omitempty"`
	LogitBias        map[string]int `json:"logit_bias,omitempty"`
	ReasoningEffort  string         `json:"reasoning_effort,omitempty"`
	// ParallelToolCalls is the caller's parallel_tool_calls (nil: not
	// sent; only with Tools). False makes an answer with more than one
	// tool call the provider's fault (Judge).
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// Verbosity and ChatTemplateKwargs (a compacted JSON object) are passed
	// to OpenAI-compatible providers. Every member added since the first
	// stored intents is omitempty: an intent that does not use it keeps its
	// fingerprint.
	Verbosity          string          `json:"verbosity,omitempty"`
	ChatTemplateKwargs json.RawMessage `json:"chat_template_kwargs,omitempty"`
	// ServiceTier ("auto", OpenAI's default, is stored as none),
	// SafetyIdentifier and PromptCacheKey are OpenAI's, passed to
	// OpenAI-compatible providers (openaiopts.go).
	ServiceTier      string `json:"service_tier,omitempty"`
	SafetyIdentifier string `json:"safety_identifier,omitempty"`
	PromptCacheKey   string `json:"prompt_cache_key,omitempty"`

	// tools is the compiled contract of Tools and ToolChoice (toolContract),
	// built by the first Judge of an answer with tools; not stored.
	tools *toolContract
	// owner is the job's owner (tenant), whose cache the caller's schemas
	// are compiled through (contract.CompileRequestSchemaFor); not stored.
	// Empty: compiled anew each time.
	owner string
}

// SetOwner says whose request in is (the job's owner), before its schemas
// are compiled: the router keeps a caller's compiled schemas for their
// owner alone, so one tenant cannot time its requests to learn which
// schemas another sent.
func (in *Input) SetOwner(owner string) { in.owner = owner }

// ResponseFormat is OpenAI's response_format.
type ResponseFormat struct {
	Type       string      `json:"type"` // text | json_object | json_schema
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is OpenAI's response_format.json_schema.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict,omitempty"`
}

// ProviderFormat is the structured-output request for providers.
func (in *Input) ProviderFormat() *providers.ResponseFormat {
	if in.ResponseFormat == nil {
		return nil
	}
	switch in.ResponseFormat.Type {
	case "json_schema":
		js := in.ResponseFormat.JSONSchema
		return &providers.ResponseFormat{Type: "json_schema", Name: js.Name, Description: js.Description, Schema: js.Schema, Strict: js.Strict}
	case "json_object":
		return &providers.ResponseFormat{Type: "json_object"}
	}
	return nil
}

// Validator compiles the json_schema of the response format, or returns nil
// when the request has none.
func (in *Input) Validator() (*contract.Validator, error) {
	if in.ResponseFormat == nil || in.ResponseFormat.Type != "json_schema" {
		return nil, nil
	}
	noExtra := false
	// The schema is the caller's: it is compiled without loading anything.
	return contract.NewRequestValidatorFor(in.owner, in.ResponseFormat.JSONSchema.Schema, "response_format.json_schema",
		contract.Rules{NoExtraKeys: &noExtra})
}

// Completion is the chat.completion object the router answers with, stored as
// the job's result.
type Completion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []Choice `json:"choices"`
	Usage             Usage    `json:"usage"`
	SystemFingerprint *string  `json:"system_fingerprint"`
	// ServiceTier is the service_tier the provider said served the answer
	// (OpenAI's "default", "flex", "priority"…), left out when it named
	// none, as every completion stored before it was carried has it.
	ServiceTier string `json:"service_tier,omitempty"`
}

// Choice is one choice of a completion.
type Choice struct {
	Index        int              `json:"index"`
	Message      AssistantMessage `json:"message"`
	FinishReason string           `json:"finish_reason"`
}

// AssistantMessage is the answer: content, tool calls, or both.
// ReasoningContent is the model's reasoning as the provider returned it
// beside the answer (DeepSeek's reasoning_content; "": none, left out): it
// is passed on, not judged — the answer is the content and the tool calls.
type AssistantMessage struct {
	Role             string          `json:"role"`
	Content          *string         `json:"content"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        json.RawMessage `json:"tool_calls,omitempty"`
}

// Text is the message's content ("" when it only called tools).
func (m AssistantMessage) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// CompletionID is the id of the job's completion: one per job, so every replay
// of an intent carries the same id.
func CompletionID(jobID string) string { return "chatcmpl-" + strings.ReplaceAll(jobID, "-", "") }

// ProviderRule reports whether a violation Judge found (by its rule) says the
// provider answered badly whatever the request asked — an empty answer (one
// that did not end at the caller's max_tokens, finish_reason "length", nor at
// one of the caller's stop sequences: see emptyIsTheCallers), tool
// calls the request did not offer, more than one when it set
// parallel_tool_calls false, calls that are malformed, or that the finish
// reason announces and the answer does not hold, an answer that cannot be
// stored — rather than that the answer missed the caller's own
// response_format (json.syntax, json.too_deep, json.number_range and the
// schema's rules: a prompt can make every model write them). Only the
// former says anything of the target's health (its circuit breaker): the caller's schema is the caller's, and one
// tenant's impossible schema must not open a route's breakers for every
// tenant.
func ProviderRule(rule string) bool {
	switch rule {
	case "empty", "tool_calls", "finish_reason", "encode", "json.unstorable":
		return true
	}
	return false
}

// Judge decides whether a provider's answer may win a chat job, and builds the
// completion stored as the job's result. v is the request's schema validator
// (nil for none).
//
// An answer whose finish reason does not say it is whole ("error", "abort",
// content_filter, one the router does not know: providers.CompleteFinishReason)
// is refused whatever its text: it is what came before the provider broke off.
// The adapters fail such an answer themselves; this is the second line.
// So is an answer that ended with finish_reason tool_calls (or function_call)
// and holds no tool call.
func Judge(in *Input, v *contract.Validator, jobID string, resp *providers.Response) (json.RawMessage, []contract.Violation) {
	if !providers.CompleteFinishReason(resp.FinishReason) {
		return nil, []contract.Violation{{Rule: "finish_reason", Path: "$.finish_reason", Message: fmt.Sprintf(
			"the provider ended the answer with finish_reason %q, which does not say it is complete (only stop, length, tool_calls and function_call do)",
			jsontext.SanitizeString(cut(resp.FinishReason, 100)))}}
	}
	content := resp.Content
	calls := len(resp.ToolCalls) > 0 && string(resp.ToolCalls) != "null"
	if !calls && (resp.FinishReason == "tool_calls" || resp.FinishReason == "function_call") {
		// The provider said it called tools and sent no call (vLLM when its
		// tool parser fails on the model's text, leaving the call in the
		// content): callers branch on finish_reason and would run a null
		// tool_calls. Not mapped to stop: the model meant to call, so the
		// text is not its answer. The provider's fault (ProviderRule): the
		// race fails over.
		return nil, []contract.Violation{{Rule: "tool_calls", Path: "$.tool_calls", Message: fmt.Sprintf(
			"the provider ended with finish_reason %s but sent no tool call", resp.FinishReason)}}
	}
	var tc *toolContract
	if len(in.Tools) > 0 { // a request without tools pays nothing for their contract
		tc = in.toolContract()
	}
	if !calls && tc != nil && tc.required && resp.FinishReason != "length" {
		// tool_choice "required" (or a named function, or allowed_tools
		// in mode required) and no call: the provider ignored the request.
		// An answer cut at the caller's max_tokens says so and is the
		// caller's.
		return nil, []contract.Violation{{Rule: "tool_calls", Path: "$.tool_calls", Message: fmt.Sprintf(
			"the request's tool_choice requires a tool call and the provider answered without one (finish_reason %q)",
			jsontext.SanitizeString(cut(resp.FinishReason, 100)))}}
	}
	switch {
	case calls:
		// Tool calls are the answer: the caller runs them; response_format
		// applies to a final answer, not to a call.
		if len(in.Tools) == 0 {
			return nil, []contract.Violation{{Rule: "tool_calls", Path: "$.tool_calls", Message: "the provider called tools the request did not offer"}}
		}
		if bad := judgeToolCalls(resp.ToolCalls, tc, resp.FinishReason == "length"); bad != nil {
			return nil, bad
		}
		if bad := judgeParallel(in, resp.ToolCalls); bad != nil {
			return nil, bad
		}
	case v != nil:
		doc, violations := v.ValidateText(content)
		if len(violations) > 0 {
			return nil, violations
		}
		// The validator accepts an answer wrapped in one markdown code fence
		// (allow_fenced, on for chat): the caller asked for JSON and gets
		// the JSON, not the fence around it.
		content = unfenced(content, doc)
	case in.ResponseFormat != nil && in.ResponseFormat.Type == "json_object":
		// An object wrapped in one markdown code fence is accepted and
		// returned without the fence, as a json_schema answer is, by the
		// validator's rule (contract.StripFence: tag empty or json, one
		// fence). Only JSON whitespace is trimmed: an answer with another
		// space around its object (U+00A0) is not JSON to the caller.
		if inner, ok := contract.StripFence(content); ok {
			content = inner
		}
		text := contract.TrimJSONSpace(content)
		// JSON that is not an object is named as what it is: decoding it
		// into a map says "cannot unmarshal array into Go value of type
		// map[string]interface {}", and `null` decodes without error.
		if kind := jsonKind(text); kind != "" && json.Valid([]byte(text)) {
			return nil, []contract.Violation{{Rule: "json.syntax", Path: "$", Message: "response_format json_object asks for a JSON object; the answer is " + kind}}
		}
		// Parsed as the json_schema path parses (contract.ParseJSON, numbers
		// kept as written): decoding into float64 refused an object holding
		// a number beyond its range ({"n":1e400}), valid JSON, as the
		// caller's contract broken.
		if _, err := contract.ParseJSON([]byte(text)); err != nil {
			return nil, []contract.Violation{{Rule: "json.syntax", Path: "$", Message: "response_format json_object asks for a JSON object: " + err.Error()}}
		}
		// Nested past what the caller's reader takes: refused as for
		// json_schema (contract.TooDeep), the caller's rule as json.syntax
		// is, since a prompt can ask every model for it.
		if deep := contract.TooDeep([]byte(text)); deep != nil {
			return nil, []contract.Violation{*deep}
		}
		// The answer goes to the caller as written: a key written twice
		// would mean another object to a reader that keeps the first.
		if dup := contract.DuplicateKey([]byte(text)); dup != nil {
			return nil, []contract.Violation{*dup}
		}
	case strings.TrimSpace(content) == "" && !emptyIsTheCallers(in, resp.FinishReason):
		return nil, []contract.Violation{{Rule: "empty", Path: "$", Message: "the answer is empty"}}
	}
	finish := resp.FinishReason
	if finish == "" {
		finish = "stop"
	}
	msg := AssistantMessage{Role: "assistant", Content: &content, ReasoningContent: resp.ReasoningContent}
	if calls {
		msg.ToolCalls = normalizeToolCalls(resp.ToolCalls)
		if content == "" {
			msg.Content = nil
		}
		if finish == "stop" || finish == "function_call" {
			// function_call is the legacy name of tool_calls (some
			// OpenAI-compatible servers still end a tools answer with it);
			// the router refuses the legacy functions API, and its callers
			// branch on "tool_calls".
			finish = "tool_calls"
		}
	}
	created := resp.Created
	if created.IsZero() {
		// The provider gave no time (Anthropic's Messages API has none, and
		// some OpenAI-compatible servers leave `created` out): the answer is
		// stamped when it is judged, not with year 1.
		created = time.Now()
	}
	c := Completion{
		ID: CompletionID(jobID), Object: "chat.completion", Created: created.Unix(), Model: resp.Model,
		Choices: []Choice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   Usage(resp.Usage), ServiceTier: resp.ServiceTier,
	}
	if fp := resp.SystemFingerprint; fp != "" {
		c.SystemFingerprint = &fp
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, []contract.Violation{{Rule: "encode", Path: "$", Message: err.Error()}}
	}
	if e := jsontext.Check(b); e != nil {
		return nil, []contract.Violation{{Rule: "json.unstorable", Path: "$", Message: "the answer holds " + e.Error() + "; it cannot be stored as the result"}}
	}
	return b, nil
}

// emptyIsTheCallers reports whether an empty (or whitespace-only) answer that
// ended with finish reason finish is what the caller's own request made it,
// and so wins as OpenAI returns it (200, content "", that finish reason)
// instead of failing as the provider's ("empty", ProviderRule, counted
// against the target's breaker for every tenant).
//
//   - "length": the answer ran out of the caller's max_tokens (a reasoning
//     model spends a small max_completion_tokens on its reasoning).
//   - "stop" (or "", which is stop) when the caller sent stop sequences: the
//     model began with one of them (stop: ["OK"] and "Answer with the word OK
//     only"; stop: ["\n"] and an answer that starts a new line), and the
//     provider — or the Anthropic adapter, which applies whitespace-only
//     stops itself (cutAtStops) — left the sequence out, as OpenAI does.
//     Nothing tells this apart from a provider that answered nothing at all,
//     so a request with stop sequences takes an empty answer as its own.
//
// Without stop sequences an empty answer that says it is whole is still the
// provider's failure. With a response_format Judge never gets here: the
// empty answer fails the caller's format, as the caller's (not ProviderRule).
func emptyIsTheCallers(in *Input, finish string) bool {
	switch finish {
	case "length":
		return true
	case "stop", "":
		return len(in.Stop) > 0
	}
	return false
}

// unfenced is the text of a json_schema answer the validator accepted (doc is
// what it validated): content as the model wrote it, or, when the model
// wrapped its JSON in one markdown code fence (```json … ```), the JSON text
// inside the fence as the model wrote it (contract.StripFence, the
// validator's own rule). The fallback to doc (the validated JSON, compacted)
// is a second line that should not be reached.
func unfenced(content string, doc json.RawMessage) string {
	if !strings.HasPrefix(contract.TrimJSONSpace(content), "```") { // no JSON text begins with a backtick
		return content
	}
	if inner, ok := contract.StripFence(content); ok {
		return inner
	}
	return string(doc)
}

// jsonKind names what a JSON text that is not an object is, by its first
// byte, for a message; "" for an object (or what is not JSON at all).
func jsonKind(text string) string {
	if text == "" {
		return ""
	}
	switch c := text[0]; {
	case c == '[':
		return "a JSON array"
	case c == '"':
		return "a JSON string"
	case c == '-' || '0' <= c && c <= '9':
		return "a JSON number"
	case c == 't' || c == 'f':
		return "true or false"
	case c == 'n':
		return "null"
	}
	return ""
}

// judgeToolCalls refuses tool calls that are not a non-empty array of
// objects each with an id and a function name: a call without them cannot be
// run, nor answered (a tool message names the call's id, and this router
// refuses one without). A stream whose tool-call deltas skip an index leaves
// such calls behind. Each call is then held to the request's contract tc
// (toolContract.judgeCall): a function offered and allowed, arguments that
// are a whole JSON object — a call cut short is not one — and that match a
// strict tool's parameters.
//
// A call whose arguments the caller's own limit cut short (finish_reason
// "length", lengthCut) or that breaks a strict tool's parameters (the
// caller's schema, as a response_format's is) is refused under the caller's
// rule tool_arguments: it fails over without counting against the target's
// breaker, so one tenant's max_tokens or impossible schema cannot open a
// route's breakers for every tenant.
func judgeToolCalls(raw json.RawMessage, tc *toolContract, lengthCut bool) []contract.Violation {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return []contract.Violation{{Rule: "tool_calls", Path: "$.tool_calls", Message: "tool calls are not a non-empty JSON array"}}
	}
	for i, call := range list {
		path := fmt.Sprintf("$.tool_calls[%d]", i)
		if b := bytes.TrimSpace(call); len(b) == 0 || b[0] != '{' {
			return []contract.Violation{{Rule: "tool_calls", Path: path, Message: "a tool call is not a JSON object"}}
		}
		var c struct {
			ID       any `json:"id"`
			Function struct {
				Name      any `json:"name"`
				Arguments any `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(call, &c) // a member of another type is checked below
		if id, _ := c.ID.(string); id == "" {
			return []contract.Violation{{Rule: "tool_calls", Path: path + ".id", Message: "a tool call has no id"}}
		}
		name, _ := c.Function.Name.(string)
		if name == "" {
			return []contract.Violation{{Rule: "tool_calls", Path: path + ".function.name", Message: "a tool call has no function name"}}
		}
		if tc != nil {
			if bad := tc.judgeCall(path, name, c.Function.Arguments, lengthCut); bad != nil {
				return []contract.Violation{*bad}
			}
		}
	}
	return nil
}

// judgeParallel refuses an answer of more than one tool call to a request
// that set parallel_tool_calls false: the caller runs one call per turn and
// may not expect more; the provider broke the request's contract (ProviderRule
// "tool_calls"), and the race fails over. calls is an array judgeToolCalls
// has accepted.
func judgeParallel(in *Input, calls json.RawMessage) []contract.Violation {
	if in.ParallelToolCalls == nil || *in.ParallelToolCalls {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(calls, &list); err != nil || len(list) <= 1 {
		return nil
	}
	return []contract.Violation{{Rule: "tool_calls", Path: "$.tool_calls", Message: fmt.Sprintf(
		"the request set parallel_tool_calls false and the provider called %d tools in one answer", len(list))}}
}

// cut is s's first n bytes at most (a provider's finish reason quoted in a
// violation is kept short).
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// DecodeCompletion reads a stored completion.
func DecodeCompletion(raw json.RawMessage) (*Completion, error) {
	var c Completion
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("stored completion: %w", err)
	}
	return &c, nil
}
