package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/contract"
	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/providers"
)

// Request is the body of POST /v1/chat/completions as clients send it. Fields
// the router does not know are ignored, not rejected; those it knows and
// cannot honour (functions, audio, …) are refused by Normalize.
type Request struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Temperature         *float32        `json:"temperature"`
	TopP                *float32        `json:"top_p"`
	Stop                json.RawMessage `json:"stop"`
	PresencePenalty     *float32        `json:"presence_penalty"`
	FrequencyPenalty    *float32        `json:"frequency_penalty"`
	LogitBias           json.RawMessage `json:"logit_bias"`
	ReasoningEffort     *string         `json:"reasoning_effort"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Seed                *int            `json:"seed"`
	User                string          `json:"user"`
	ResponseFormat      *ResponseFormat `json:"response_format"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools              json.RawMessage `json:"tools"`
	N                  *int            `json:"n"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	ParallelToolCalls  *bool           `json:"parallel_tool_calls"`
	Verbosity          *string         `json:"verbosity"`
	ChatTemplateKwargs json.RawMessage `json:"chat_template_kwargs"`
	ServiceTier        *string         `json:"service_tier"`
	SafetyIdentifier   *string         `json:"safety_identifier"`
	PromptCacheKey     *string         `json:"prompt_cache_key"`
	// Refused when present (Normalize says why): the deprecated function
	// calling, what asks for an answer other than text, and OpenAI's
	// moderation of the request and answer.
	Functions        json.RawMessage `json:"functions"`
	FunctionCall     json.RawMessage `json:"function_call"`
	Modalities       json.RawMessage `json:"modalities"`
	Audio            json.RawMessage `json:"audio"`
	WebSearchOptions json.RawMessage `json:"web_search_options"`
	Moderation       json.RawMessage `json:"moderation"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Refusal    *string         `json:"refusal"`
	// ReasoningContent is an earlier answer's reasoning, as the router
	// returned it: DeepSeek's thinking mode and Moonshot's kimi-k2-thinking
	// refuse a tool loop whose assistant turns come back without it. Part
	// of the intent; sent only to providers with send_reasoning_content.
	ReasoningContent *string `json:"reasoning_content"`
}

// RequestError is a request the router cannot serve; Param names the field.
type RequestError struct {
	Param   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

// Normalize checks the request and returns the intent to store. Its schemas
// are compiled for no owner, so not kept (see NormalizeFor).
func (r *Request) Normalize() (*Input, error) { return r.NormalizeFor("") }

// NormalizeFor is Normalize of owner's request: its response_format and
// strict tools' schemas are compiled through owner's part of the schema
// cache (contract.CompileRequestSchemaFor), and the intent returned is
// owner's (Input.SetOwner).
func (r *Request) NormalizeFor(owner string) (*Input, error) {
	bad := func(param, format string, args ...any) (*Input, error) {
		return nil, &RequestError{Param: param, Message: fmt.Sprintf(format, args...)}
	}
	if r.Model == "" {
		return bad("model", "model is required: name one of the routes listed by GET /v1/models")
	}
	if len(r.Messages) == 0 {
		return bad("messages", "messages must hold at least one message")
	}
	if r.N != nil && *r.N != 1 {
		return bad("n", "only n=1 is supported: the router returns the one winning completion")
	}
	if t := r.Temperature; t != nil && (*t < 0 || *t > 2) {
		return bad("temperature", "temperature must be between 0 and 2, got %v", *t)
	}
	if p := r.TopP; p != nil && (*p < 0 || *p > 1) {
		return bad("top_p", "top_p must be between 0 and 1, got %v", *p)
	}
	// The router answers with the winning completion as it judged it, which
	// carries no log probabilities: asking for them is refused rather than
	// answered without them.
	if r.Logprobs != nil && *r.Logprobs {
		return bad("logprobs", "logprobs is not supported: the router does not return log probabilities; leave logprobs out or set it to false")
	}
	if n := r.TopLogprobs; n != nil && *n != 0 {
		return bad("top_logprobs", "top_logprobs is not supported: the router does not return log probabilities; leave top_logprobs out")
	}
	if present(r.Functions) {
		return bad("functions", "functions (deprecated function calling) is not supported: declare the functions as tools "+
			`({"type":"function","function":{...}}) and use tool_choice`)
	}
	if present(r.FunctionCall) {
		return bad("function_call", "function_call (deprecated function calling) is not supported: use tools and tool_choice")
	}
	if r.StreamOptions != nil && !r.Stream {
		return bad("stream_options", "stream_options is only allowed when stream is true")
	}
	// The router returns text (and tool calls) only: a request for another
	// output, or for a web search, is refused rather than answered without
	// it.
	if present(r.Modalities) {
		var mods []string
		if err := json.Unmarshal(r.Modalities, &mods); err != nil {
			return bad("modalities", `modalities must be an array of strings; the router returns text only: leave modalities out or send ["text"]`)
		}
		for i, m := range mods {
			if m != "text" {
				return bad("modalities", "modalities[%d] is %q: the router returns text only; leave modalities out or send [\"text\"]", i, cut(m, 60))
			}
		}
	}
	if present(r.Audio) {
		return bad("audio", "audio output is not supported: the router returns text only; leave audio out")
	}
	if present(r.WebSearchOptions) {
		return bad("web_search_options", "web_search_options is not supported: the router returns the model's text only and runs no web search; leave it out")
	}
	// A caller that asked for flagged input or output to be blocked must not
	// get an unmoderated answer with 200: no adapter can pass it on, and a
	// completion has no member for its results.
	if present(r.Moderation) {
		return bad("moderation", "moderation is not supported: the router does not run OpenAI's moderation on the request or the answer, nor return its results; leave moderation out")
	}
	in := &Input{Temperature: r.Temperature, TopP: r.TopP, Seed: r.Seed, User: r.User, ResponseFormat: r.ResponseFormat, owner: owner}
	if present(r.Stop) {
		stop, err := stopSequences(r.Stop)
		if err != nil {
			return bad("stop", "%v", err)
		}
		in.Stop = stop
	}
	// A penalty of 0 is OpenAI's default, and go-openai leaves a 0 out: it is
	// stored as no penalty, so that 0 and none are one intent.
	if p := r.PresencePenalty; p != nil {
		if *p < -2 || *p > 2 {
			return bad("presence_penalty", "presence_penalty must be between -2 and 2, got %v", *p)
		}
		in.PresencePenalty = *p
	}
	if p := r.FrequencyPenalty; p != nil {
		if *p < -2 || *p > 2 {
			return bad("frequency_penalty", "frequency_penalty must be between -2 and 2, got %v", *p)
		}
		in.FrequencyPenalty = *p
	}
	if present(r.LogitBias) {
		bias, err := logitBias(r.LogitBias)
		if err != nil {
			return bad("logit_bias", "%v", err)
		}
		in.LogitBias = bias
	}
	if e := r.ReasoningEffort; e != nil {
		if !slices.Contains(reasoningEfforts, *e) {
			return bad("reasoning_effort", "reasoning_effort %q is not one of %s; leave it out for the model's default",
				rfcproblem.Clip(*e), strings.Join(reasoningEfforts, ", "))
		}
		in.ReasoningEffort = *e
	}
	// max_completion_tokens, OpenAI's current name, wins over max_tokens; the
	// one that is not used is not judged (a client may send both, the old one
	// as 0).
	limit, param := r.MaxTokens, "max_tokens"
	if r.MaxCompletionTokens != nil {
		limit, param = r.MaxCompletionTokens, "max_completion_tokens"
	}
	if limit != nil {
		if *limit <= 0 {
			return bad(param, "%s must be a positive number of tokens, got %d; leave it out for the provider's default", param, *limit)
		}
		in.MaxTokens = *limit
	}
	if present(r.Tools) {
		var tools []struct {
			Type any `json:"type"` // only the type: a tool's parameters are not decoded here
		}
		if err := json.Unmarshal(r.Tools, &tools); err != nil || len(tools) == 0 {
			return bad("tools", "tools must be a non-empty array of tool definitions")
		}
		for i, tool := range tools {
			// Only a function tool's calls come back through the router
			// (adapters and Judge read calls by function.name): a custom or
			// built-in tool the model called would be an answer the router
			// cannot carry, failed as the provider's.
			if typ, _ := tool.Type.(string); typ != "function" {
				return bad("tools", "tools[%d].type is %s: the router supports only function tools "+
					`({"type":"function","function":{"name":...}}); send other tools to the provider directly`, i, typeOf(tool.Type))
			}
		}
		if err := checkToolShapes(r.Tools); err != nil {
			return nil, err
		}
		in.Tools = r.Tools
	}
	if present(r.ToolChoice) {
		choice, err := toolChoice(r.ToolChoice)
		switch {
		case err != nil:
			return bad("tool_choice", "%v", err)
		case in.Tools == nil && choice != "none":
			return bad("tool_choice", "tool_choice is only allowed when tools are specified: add the tools it refers to, or leave tool_choice out")
		case in.Tools != nil:
			in.ToolChoice = r.ToolChoice
		}
		// "none" without tools is what no tool_choice means: it is left out,
		// for providers that refuse a tool_choice without tools.
	}
	if in.Tools != nil {
		// The contract Judge holds answers to: every tool named, a
		// tool_choice object that names offered functions, and the
		// parameters of strict tools compiled (as response_format's schema
		// is, with the same bounds).
		if _, err := compileToolContract(owner, in.Tools, in.ToolChoice); err != nil {
			return nil, err
		}
	}
	if r.ParallelToolCalls != nil {
		if in.Tools == nil {
			return bad("parallel_tool_calls", "parallel_tool_calls is only allowed when tools are specified: add tools, or leave parallel_tool_calls out")
		}
		in.ParallelToolCalls = r.ParallelToolCalls
	}
	if v := r.Verbosity; v != nil {
		if !slices.Contains(verbosities, *v) {
			return bad("verbosity", "verbosity %q is not one of %s; leave it out for the model's default", cut(*v, 60), strings.Join(verbosities, ", "))
		}
		in.Verbosity = *v
	}
	if present(r.ChatTemplateKwargs) {
		kwargs, err := templateKwargs(r.ChatTemplateKwargs)
		if err != nil {
			return bad("chat_template_kwargs", "%v", err)
		}
		in.ChatTemplateKwargs = kwargs
	}
	if err := r.openAIOptions(in); err != nil {
		return nil, err
	}
	var turn toolTurn // the calls of the assistant message the tool messages answer
	for i, m := range r.Messages {
		if m.Role != "tool" {
			// OpenAI and Anthropic refuse a call that the tool messages
			// right after its assistant message do not answer: stored, it
			// would be a job that fails with the provider's 400.
			if err := turn.end(); err != nil {
				return nil, err
			}
		}
		switch m.Role {
		case "system", "developer", "user", "assistant":
		case "tool":
			if m.ToolCallID == "" {
				return bad(fmt.Sprintf("messages[%d].tool_call_id", i), "a tool message needs the tool_call_id it answers")
			}
			// A tool message answers a call of the assistant message before
			// it that no earlier tool message answered: stored, anything
			// else would be a job that fails with the provider's 400.
			if err := turn.answer(i, m.ToolCallID); err != nil {
				return nil, err
			}
		default:
			return bad(fmt.Sprintf("messages[%d].role", i), "role %q is not supported (use system, developer, user, assistant or tool)", rfcproblem.Clip(m.Role))
		}
		// tool_call_id and tool_calls belong to tool and assistant messages:
		// OpenAI refuses them on any other role, and the Anthropic adapter
		// would drop another role's calls, leaving the tool messages after
		// them answering no tool_use. Stored, either is a job every
		// provider refuses.
		if m.ToolCallID != "" && m.Role != "tool" {
			return bad(fmt.Sprintf("messages[%d].tool_call_id", i), "only a tool message may carry tool_call_id (the id of the call it answers), not a %s message: "+
				"leave tool_call_id out, or send the tool's result as a message with role tool", m.Role)
		}
		var calls json.RawMessage
		if present(m.ToolCalls) && m.Role != "assistant" && !emptyArray(m.ToolCalls) {
			return bad(fmt.Sprintf("messages[%d].tool_calls", i), "only an assistant message may carry tool_calls (the calls the model made), not a %s message: "+
				"leave tool_calls out, or send them on the assistant message that made them", m.Role)
		}
		if present(m.ToolCalls) && m.Role == "assistant" {
			kept, err := turn.calls(i, m.ToolCalls)
			if err != nil {
				return nil, err
			}
			calls = kept
		}
		if m.Name != "" && !validMessageName(m.Name) {
			// OpenAI refuses it ("string does not match pattern"), on every
			// attempt.
			return bad(fmt.Sprintf("messages[%d].name", i), "messages[%d].name %q holds white space or one of < | \\ / > (OpenAI refuses such a name): "+
				"rename it, for example %q, or leave name out", i, cut(m.Name, 64), messageNameFrom(m.Name))
		}
		if !present(bytes.TrimSpace(m.Content)) && !(m.Role == "assistant" && (calls != nil || m.Refusal != nil)) {
			// Only an assistant's message may be without content: one that
			// called tools, or an earlier answer's refusal. OpenAI refuses
			// any other null ("expected a string, got null") or missing
			// content ("Missing required parameter"); a user's null is not an
			// empty question, nor a system's an empty instruction.
			what := "not null"
			if len(bytes.TrimSpace(m.Content)) == 0 {
				what = "it has none"
			}
			return bad(fmt.Sprintf("messages[%d].content", i), "a %s message needs content: a string or an array of text parts, %s%s",
				m.Role, what, nullContentAdvice(m.Role))
		}
		text, err := contentText(m.Content)
		if err != nil {
			return bad(fmt.Sprintf("messages[%d].content", i), "%v", err)
		}
		msg := providers.Message{Role: m.Role, Content: text, Name: m.Name, ToolCallID: m.ToolCallID}
		if m.Role == "assistant" {
			// An earlier answer's refusal and reasoning, sent back as history.
			if m.Refusal != nil {
				msg.Refusal = *m.Refusal
			}
			if m.ReasoningContent != nil {
				msg.ReasoningContent = *m.ReasoningContent
			}
		}
		msg.ToolCalls = calls
		in.Messages = append(in.Messages, msg)
	}
	if err := turn.end(); err != nil {
		return nil, err
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "":
			return bad("response_format.type", `response_format needs a type: "text", "json_object" or "json_schema"; leave response_format out for text`)
		case "text":
			in.ResponseFormat = nil
		case "json_object":
			if !mentionsJSON(in.Messages) {
				// OpenAI-compatible providers refuse it ("'messages' must
				// contain the word 'json' in some form"): refused before a
				// job is stored, not by every provider after.
				return bad("messages", `response_format json_object needs the word "JSON" in the messages: OpenAI-compatible providers refuse the request without it; `+
					`say it in the system or user message, for example "Answer in JSON."`)
			}
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return bad("response_format.json_schema", "response_format json_schema needs json_schema.schema")
			}
			if kind := schemaKind(rf.JSONSchema.Schema); kind != "" {
				// true and false are JSON Schemas, but OpenAI takes an
				// object only, and the Anthropic adapter stops the job: a
				// job no target can run. A tool's parameters get the same
				// check (checkToolShapes).
				return bad("response_format.json_schema.schema", `response_format.json_schema.schema must be a JSON Schema object such as {"type":"object","properties":{...}}; it is %s`, kind)
			}
			if rf.JSONSchema.Name == "" {
				rf.JSONSchema.Name = "response"
			} else if !validSchemaName(rf.JSONSchema.Name) {
				return bad("response_format.json_schema.name", "response_format.json_schema.name %q is not 1 to 64 letters, digits, underscores or dashes "+
					"(OpenAI refuses any other name): rename it, for example %q", cut(rf.JSONSchema.Name, 64), schemaNameFrom(rf.JSONSchema.Name))
			}
		default:
			return bad("response_format.type", "response_format.type %q is not text, json_object or json_schema", rfcproblem.Clip(rf.Type))
		}
	}
	if _, err := in.Validator(); err != nil {
		if be := (*contract.SchemaBoundsError)(nil); errors.As(err, &be) {
			// It was not compiled: the error says which bound it is beyond.
			return bad("response_format.json_schema.schema", "%v", err)
		}
		if pe := (*contract.SchemaPatternError)(nil); errors.As(err, &pe) {
			// Nor was this: the error says which pattern Go cannot parse, and why.
			return bad("response_format.json_schema.schema", "%v", err)
		}
		return bad("response_format.json_schema.schema", "the JSON Schema does not compile: %v", err)
	}
	return in, nil
}

// toolChoice checks the shape of OpenAI's tool_choice: "none", "auto",
// "required", or an object (a named tool, passed through as it is). It returns
// the string form, or "" for an object.
func toolChoice(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "none", "auto", "required":
			return s, nil
		}
		return "", fmt.Errorf("tool_choice %q is not none, auto, required or an object naming a tool", rfcproblem.Clip(s))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", fmt.Errorf(`tool_choice must be "none", "auto", "required" or an object such as {"type":"function","function":{"name":"..."}}`)
	}
	var typ string
	if json.Unmarshal(obj["type"], &typ) != nil || (typ != "function" && typ != "allowed_tools") {
		// The object's other members are checked against the tools
		// (compileToolContract).
		return "", fmt.Errorf(`tool_choice object needs a type: {"type":"function","function":{"name":"..."}} or {"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[...]}}; its type is %s`, typeOfRaw(obj["type"]))
	}
	return "", nil
}

// typeOf quotes a tool's type for an error message.
func typeOf(v any) string {
	switch t := v.(type) {
	case nil:
		return "missing"
	case string:
		return strconv.Quote(cut(t, 60))
	}
	return "not a string"
}

// typeOfRaw is typeOf for a raw JSON member.
func typeOfRaw(raw json.RawMessage) string {
	var v any
	if present(raw) {
		_ = json.Unmarshal(raw, &v)
	}
	return typeOf(v)
}

// nullContentAdvice is what a message of role with null content can send
// instead.
func nullContentAdvice(role string) string {
	switch role {
	case "assistant":
		return ` (only an assistant message with tool_calls may have null content); send "" for an empty answer`
	case "tool":
		return `; send "" for a tool that returned nothing`
	}
	return ""
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// emptyArray reports whether raw is [] (JSON whitespace allowed around and
// inside it).
func emptyArray(raw json.RawMessage) bool {
	p := skipSpace(raw, 0)
	if p >= len(raw) || raw[p] != '[' {
		return false
	}
	p = skipSpace(raw, p+1)
	return p < len(raw) && raw[p] == ']' && skipSpace(raw, p+1) == len(raw)
}

// schemaKind names what raw, a response_format's schema, is when it is not a
// JSON object; "" when it is one.
func schemaKind(raw json.RawMessage) string {
	switch text := string(bytes.TrimSpace(raw)); text {
	case "true":
		return "the boolean schema true"
	case "false":
		return "the boolean schema false"
	default:
		return jsonKind(text)
	}
}

// contentText accepts a string, null (an assistant message that only called
// tools), or an array of text parts, joined with a newline between each two
// (as vLLM joins them): "Translate to French:" and "Good morning" stay two
// lines, not one word.
func contentText(raw json.RawMessage) (string, error) {
	if !present(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content must be a string or an array of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part type %q is not supported; only text parts are", rfcproblem.Clip(p.Type))
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// maxStop is how many stop sequences OpenAI's API takes.
const maxStop = 4

// stopSequences reads OpenAI's stop: one string, or an array of up to four
// non-empty strings. An empty array is no stop sequence.
func stopSequences(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, fmt.Errorf("stop must not be an empty string: leave it out for none")
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("stop must be a string or an array of up to %d strings", maxStop)
	}
	if len(many) > maxStop {
		return nil, fmt.Errorf("stop holds %d sequences; at most %d are allowed", len(many), maxStop)
	}
	for i, s := range many {
		if s == "" {
			return nil, fmt.Errorf("stop[%d] is an empty string: every stop sequence needs at least one character", i)
		}
	}
	if len(many) == 0 {
		return nil, nil
	}
	return many, nil
}

// reasoningEfforts are the values of reasoning_effort, as go-openai (the
// OpenAI adapter's library) names them. Which of them a model takes is the
// model's to say: the adapter passes the value as given.
var reasoningEfforts = []string{
	openai.ReasoningEffortNone, openai.ReasoningEffortMinimal, openai.ReasoningEffortLow, openai.ReasoningEffortMedium,
	openai.ReasoningEffortHigh, openai.ReasoningEffortXHigh, openai.ReasoningEffortMax,
}

// maxLogitBias bounds a logit_bias value either way, as OpenAI's API does.
const maxLogitBias = 100

// logitBias reads OpenAI's logit_bias: an object mapping token ids (decimal
// strings) to whole numbers from -100 to 100. An empty object is no bias.
func logitBias(raw json.RawMessage) (map[string]int, error) {
	var m map[string]float64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf(`logit_bias must be an object mapping token ids to whole numbers from -%d to %d, such as {"50256": -100}`, maxLogitBias, maxLogitBias)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first bad key is named, the same one every time
	bias := make(map[string]int, len(m))
	for _, k := range keys {
		id, err := strconv.ParseUint(k, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("logit_bias key %q is not a token id: keys are the tokenizer's token ids written as decimal strings, such as \"50256\"", rfcproblem.Clip(k))
		}
		v := m[k]
		if v != math.Trunc(v) || v < -maxLogitBias || v > maxLogitBias {
			return nil, fmt.Errorf("logit_bias[%q] is %v: a bias must be a whole number from -%d to %d", rfcproblem.Clip(k), v, maxLogitBias, maxLogitBias)
		}
		// One spelling per token ("7", not "007"), so that one intent has
		// one fingerprint and the provider gets each token once.
		canon := strconv.FormatUint(id, 10)
		if _, dup := bias[canon]; dup {
			return nil, fmt.Errorf("logit_bias names token %s twice (as %q and another spelling); give each token once, without leading zeros", canon, rfcproblem.Clip(k))
		}
		bias[canon] = int(v)
	}
	if len(bias) == 0 {
		return nil, nil
	}
	return bias, nil
}

// verbosities are the values of OpenAI's verbosity.
var verbosities = []string{"low", "medium", "high"}

// templateKwargs reads chat_template_kwargs, a JSON object of the arguments
// vLLM and SGLang pass to the model's chat template ({"enable_thinking":
// false}), compacted as stored and sent; an empty object is none.
func templateKwargs(raw json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf(`chat_template_kwargs must be a JSON object, such as {"enable_thinking": false}`)
	}
	if len(obj) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("chat_template_kwargs: %v", err)
	}
	return b.Bytes(), nil
}
