package providers

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/jsontext"
)

// Metadata keys the adapter sets when cfg.SupportsLookup: the attempt id travels
// as stored-completion metadata, the form OpenAI defines for finding a completion
// again (SPEC §5.6). No idempotency header is invented.
const (
	MetadataAttemptID = "router_attempt_id"
	MetadataJobID     = "router_job_id"
)

func (p *OpenAI) chatRequest(req *Request) (openai.ChatCompletionRequest, *Error) {
	var creq openai.ChatCompletionRequest
	if req == nil {
		return creq, NewError(p.cfg.Name, KindMisconfigured, "nil request")
	}
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		return creq, NewError(p.cfg.Name, KindMisconfigured, "no model: set OpenAIConfig.Model or Request.Model")
	}
	creq.Model = model
	// The tools, tool_choice and tool calls decoded here check their shape and
	// feed go-openai's check of reasoning models' parameters; the body sends
	// the caller's own JSON (chatBodyJSON), as go-openai's types would lose
	// members and write a tool's missing parameters as null.
	creq.Messages = make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		cm := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID, Refusal: m.Refusal}
		if p.cfg.SendReasoningContent {
			cm.ReasoningContent = m.ReasoningContent
		}
		if len(m.ToolCalls) > 0 {
			if err := json.Unmarshal(m.ToolCalls, &cm.ToolCalls); err != nil {
				e := NewError(p.cfg.Name, KindBadRequest, "messages["+strconv.Itoa(i)+"].tool_calls: "+err.Error())
				return creq, e
			}
		}
		creq.Messages[i] = cm
	}
	if len(req.Tools) > 0 {
		if err := json.Unmarshal(req.Tools, &creq.Tools); err != nil {
			return creq, NewError(p.cfg.Name, KindBadRequest, "tools: "+err.Error())
		}
	}
	if len(req.ToolChoice) > 0 {
		var choice any
		if err := json.Unmarshal(req.ToolChoice, &choice); err != nil {
			return creq, NewError(p.cfg.Name, KindBadRequest, "tool_choice: "+err.Error())
		}
		creq.ToolChoice = choice
	}
	if req.ParallelToolCalls != nil {
		creq.ParallelToolCalls = *req.ParallelToolCalls
	}
	creq.Verbosity = req.Verbosity
	if len(req.ChatTemplateKwargs) > 0 {
		// Decoded with json.Number, so that a number goes out as the caller
		// wrote it; the object's members are sent in key order.
		dec := json.NewDecoder(bytes.NewReader(req.ChatTemplateKwargs))
		dec.UseNumber()
		if err := dec.Decode(&creq.ChatTemplateKwargs); err != nil {
			return creq, NewError(p.cfg.Name, KindBadRequest, "chat_template_kwargs: "+err.Error())
		}
	}
	reasoning := isReasoningModel(model)
	if req.Temperature != nil {
		t := *req.Temperature
		switch {
		case t == 0 && reasoning:
			// A reasoning model takes only its default temperature (1):
			// OpenAI refuses 0, and go-openai refuses anything but 0 (left
			// out) and 1 before sending. Left out, as the model would
			// sample anyway.
		case t == 0:
			// go-openai's float32 cannot say "0, sent" (omitempty would leave
			// the provider's default, usually 1): zeroSampling marks it, and
			// the body says 0 (appendChatBody, chatBodyJSON).
			creq.Temperature = zeroSampling
		default:
			creq.Temperature = t
		}
	}
	if req.TopP != nil {
		creq.TopP = *req.TopP
		if creq.TopP == 0 {
			creq.TopP = zeroSampling // as a zero temperature: sent as 0
		}
	}
	creq.Stop = req.Stop
	creq.PresencePenalty, creq.FrequencyPenalty = req.PresencePenalty, req.FrequencyPenalty
	creq.LogitBias = req.LogitBias
	// Passed as given: which efforts a model takes is the model's to say (for
	// the GPT-6 ids, go-openai's check below says it before sending).
	creq.ReasoningEffort = req.ReasoningEffort
	if reasoning {
		// OpenAI's reasoning models refuse max_tokens: the limit is
		// max_completion_tokens (reasoning tokens count against it).
		creq.MaxCompletionTokens = req.MaxTokens
	} else {
		creq.MaxTokens = req.MaxTokens
	}
	creq.Seed = req.Seed
	creq.User = req.User
	// go-openai leaves each of them out when "" (omitempty), and writes a
	// request that sets one with encoding/json (chatBodyWritable).
	creq.ServiceTier = openai.ServiceTier(req.ServiceTier)
	creq.SafetyIdentifier = req.SafetyIdentifier
	if rf := req.ResponseFormat; rf != nil {
		f, err := p.responseFormat(rf)
		if err != nil {
			return creq, err
		}
		creq.ResponseFormat = f
	}
	if reasoning {
		// What go-openai would refuse before sending is a parameter this
		// model cannot take (a temperature other than its default, a top_p,
		// tools on a GPT-6 model…): the request's, not this target's fault —
		// its breaker must not count it — and another target of the route
		// may take the request.
		vreq := creq
		vreq.Model = reasoningModelID(model) // the check knows only OpenAI's own ids
		if err := openai.NewReasoningValidator().Validate(vreq); err != nil {
			e := NewError(p.cfg.Name, KindBadRequest, "model "+model+" is one of OpenAI's reasoning models and cannot take this request: "+err.Error()+
				"; leave the parameter out (a temperature of 0 is left out for such a model), or route the request to another model")
			e.Action, e.Err = ActionFailover, err
			return creq, e
		}
	}
	if p.cfg.SupportsLookup {
		creq.Store = true
		creq.Metadata = map[string]string{}
		if req.AttemptID != "" {
			creq.Metadata[MetadataAttemptID] = req.AttemptID
		}
		if req.JobID != "" {
			creq.Metadata[MetadataJobID] = req.JobID
		}
	}
	return creq, nil
}

func (p *OpenAI) responseFormat(rf *ResponseFormat) (*openai.ChatCompletionResponseFormat, *Error) {
	switch rf.Type {
	case "", "text":
		return nil, nil
	case "json_object":
		return &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}, nil
	case "json_schema":
		if !json.Valid(rf.Schema) {
			e := NewError(p.cfg.Name, KindMisconfigured, "response format json_schema: Schema is not valid JSON")
			e.Action = ActionStop // the same schema goes to every provider
			return nil, e
		}
		name := rf.Name
		if name == "" {
			name = "response"
		}
		return &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:        name,
				Description: rf.Description,
				Schema:      json.RawMessage(rf.Schema),
				Strict:      rf.Strict,
			},
		}, nil
	}
	e := NewError(p.cfg.Name, KindMisconfigured, "unknown response format type "+rf.Type+": want json_schema or json_object")
	e.Action = ActionStop
	return nil, e
}

// response maps choice 0 of an answer to a Response, or to the *Error a
// complete-looking answer can still be: no choices, filtered, or refused.
func (p *OpenAI) response(id, model string, created int64, choices []openai.ChatCompletionChoice, u openai.Usage) (*Response, error) {
	if len(choices) == 0 {
		// The provider may still have billed the prompt (billed).
		e := NewError(p.cfg.Name, KindEmptyResponse, "response has no choices")
		return nil, e.billed(openAIUsage(u), id, model)
	}
	return p.responseBody(nil, id, model, created, choices, u)
}

// responseBody is response for an answer whose body (the chat.completion
// JSON go-openai decoded choices from) is at hand: each tool call of choice
// 0 (firstChoice) keeps the extra_content body gives it (Gemini's thought signature,
// answerToolCallExtras), which go-openai's ToolCall has no member for. A nil
// body is response.
func (p *OpenAI) responseBody(body []byte, id, model string, created int64, choices []openai.ChatCompletionChoice, u openai.Usage) (*Response, error) {
	if len(choices) == 0 {
		return p.response(id, model, created, choices, u)
	}
	k := firstChoice(choices)
	c := choices[k]
	calls := withExtras(c.Message.ToolCalls, answerToolCallExtras(body, k))
	content, reasoning := answerContent(c.Message), cmp.Or(c.Message.ReasoningContent, answerReasoning(body, k))
	r, err := p.finish(id, model, created, content, c.Message.Refusal, string(c.FinishReason), u, calls, false)
	if r != nil {
		r.ReasoningContent = reasoningText(reasoning)
		r.ServiceTier = providerServiceTier(topString(body, "service_tier"))
	}
	// A billed failure carries the answer it was built from: the race
	// counts it where the usage leaves a hole (Error.Answer).
	withAnswer(err, func() string {
		return answerText(len(calls), func(i int) (string, string) { return calls[i].Function.Name, calls[i].Function.Arguments },
			reasoning, content, c.Message.Refusal)
	})
	return r, err
}

// firstChoice is the position in choices (not empty) of the choice whose
// index is 0, the one the router asked for and a stream's answer is made of
// (a provider may list its choices in another order); the first when none
// says 0.
func firstChoice(choices []openai.ChatCompletionChoice) int {
	for k, c := range choices {
		if c.Index == 0 {
			return k
		}
	}
	return 0
}

// reasoningText is the reasoning_content of an answer as the router keeps
// it (Response.ReasoningContent): stored in the job's result, so invalid
// UTF-8 and NUL become U+FFFD rather than failing the answer as unstorable
// (the reasoning is not the answer, and the caller's contract is not held
// to it).
func reasoningText(s string) string { return jsontext.SanitizeString(s) }

// answerContent is the text of an answer's message. Some providers (Mistral's
// Magistral models) answer with content as an array of parts, which go-openai
// decodes into MultiContent and leaves Content empty: the answer is its
// "text" parts, joined; its "thinking" parts (the model's reasoning) and any
// other kind are not.
func answerContent(m openai.ChatCompletionMessage) string {
	if m.Content != "" || len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, part := range m.MultiContent {
		if part.Type == openai.ChatMessagePartTypeText {
			b.WriteString(part.Text)
		}
	}
	return b.String()
}

// finish maps an answer that ended (streamed or not) to a Response, or to
// the *Error it still is: filtered, broken off (a finish reason that does not
// say the answer is whole, CompleteFinishReason), with a tool call that has
// no id or name, refused, or ended to call tools without a call
// (missingToolCall). Each such error carries the usage the provider billed
// (billed). finishReason is the provider's own word, streamed or not: it is
// mapped here (wholeFinishReason), and the errors name it as it came.
func (p *OpenAI) finish(id, model string, created int64, content, refusal, finishReason string, u openai.Usage,
	toolCalls []toolCall, streamed bool) (*Response, error) {
	if filteredFinishReason(finishReason) {
		msg := "output withheld by the provider's content filter"
		if finishReason != string(openai.FinishReasonContentFilter) {
			msg += " (finish_reason " + strconv.Quote(finishReason) + ")" // one of filteredFinishReason's words: short
		}
		e := NewError(p.cfg.Name, KindContentPolicy, msg)
		e.Code = "content_filter"
		return nil, e.billed(openAIUsage(u), id, model)
	}
	said := finishReason // the provider's word, for the errors below
	finishReason = wholeFinishReason(finishReason)
	if !CompleteFinishReason(finishReason) {
		return nil, brokenOff(p.cfg.Name, "finish_reason", finishReason, streamed, openAIUsage(u), id, model)
	}
	nameToolCalls(toolCalls)
	if i := incompleteToolCall(len(toolCalls), func(i int) (string, string) {
		return toolCalls[i].ID, toolCalls[i].Function.Name
	}); i >= 0 {
		return nil, malformedToolCall(p.cfg.Name, i, streamed, openAIUsage(u), id, model)
	}
	if content == "" && len(toolCalls) == 0 && strings.TrimSpace(refusal) != "" {
		e := NewError(p.cfg.Name, KindContentPolicy, "model refused: "+truncate(refusal))
		e.Code = "refusal"
		return nil, e.billed(openAIUsage(u), id, model)
	}
	if len(toolCalls) == 0 && (finishReason == string(openai.FinishReasonToolCalls) || finishReason == string(openai.FinishReasonFunctionCall)) {
		return nil, missingToolCall(p.cfg.Name, "finish_reason", said, streamed, openAIUsage(u), id, model)
	}
	r := &Response{
		Content:      content,
		Model:        jsontext.SanitizeString(model), // stored in text columns
		ResponseID:   jsontext.SanitizeString(id),
		FinishReason: finishReason,
		Usage:        openAIUsage(u),
	}
	if created != 0 {
		r.Created = time.Unix(created, 0)
	}
	if len(toolCalls) > 0 {
		b, err := json.Marshal(toolCalls)
		if err != nil {
			return nil, NewError(p.cfg.Name, KindMalformedResponse, "tool calls do not encode: "+err.Error())
		}
		r.ToolCalls = b
	}
	return r, nil
}

// missingToolCall is the failure of an answer that ended with finish_reason
// tool_calls (or the deprecated function_call) and holds no tool call: vLLM
// answers so when its tool parser fails on the model's text, which keeps the
// call unparsed in the content. A caller that branches on the finish reason
// would run a null tool_calls, and the text is not the model's answer either:
// the provider's fault, a known outcome with the usage it billed, failed over
// as a malformed tool call is (chat.Judge refuses it too, for any adapter).
//
// field names what said so: "finish_reason" (OpenAI-compatible) or
// "stop_reason" (Anthropic's tool_use, which its API never sends without a
// tool_use block: a gateway or proxy that dropped the block).
func missingToolCall(provider, field, reason string, streamed bool, u Usage, id, model string) *Error {
	kind := KindMalformedResponse
	if streamed {
		kind = KindStreamMalformed
	}
	why := " (its tool-call parser may have failed on the model's text)"
	if field != "finish_reason" {
		why = ""
	}
	e := NewError(provider, kind, "the provider ended with "+field+" "+reason+
		" but sent no tool call"+why+": the answer cannot be used")
	return e.billed(u, id, model)
}

// openAIUsage is an answer's usage as the router keeps it. Its cached_tokens
// are part of its prompt_tokens: a gateway's larger count (4294967295 beside
// 20) is held to prompt_tokens, as anthropicUsage holds cache reads to the
// prompt, not marked Estimated (no count is the router's).
func openAIUsage(u openai.Usage) Usage {
	r := reportedUsage(int64(u.PromptTokens), int64(u.CompletionTokens), int64(u.TotalTokens))
	if d := u.PromptTokensDetails; d != nil {
		r.PromptTokensDetails.CachedTokens = min(clampTokens(int64(d.CachedTokens)), r.PromptTokens)
		r.PromptTokensDetails.AudioTokens = clampTokens(int64(d.AudioTokens))
	}
	if d := u.CompletionTokensDetails; d != nil {
		r.CompletionTokensDetails.ReasoningTokens = clampTokens(int64(d.ReasoningTokens))
		r.CompletionTokensDetails.AudioTokens = clampTokens(int64(d.AudioTokens))
		r.CompletionTokensDetails.AcceptedPredictionTokens = clampTokens(int64(d.AcceptedPredictionTokens))
		r.CompletionTokensDetails.RejectedPredictionTokens = clampTokens(int64(d.RejectedPredictionTokens))
	}
	return r
}

// fingerprint is a provider's system_fingerprint as the router keeps it
// (stored in the result).
func fingerprint(s string) string { return jsontext.SanitizeString(s) }

// isReasoningModel reports whether go-openai treats model as one of OpenAI's
// reasoning models (o1, o3, o4, gpt-5…): such a request must carry
// max_completion_tokens, not max_tokens, and no temperature but the default,
// or go-openai refuses it before sending — every prompt with a max_tokens
// failed on such a target, counted against its breaker. The library's own
// check decides, so a model it learns about is handled without a change here;
// it is asked about reasoningModelID, which it knows.
func isReasoningModel(model string) bool {
	return openai.NewReasoningValidator().Validate(openai.ChatCompletionRequest{Model: reasoningModelID(model), MaxTokens: 1}) != nil
}

// reasoningModelID is model as go-openai's check of reasoning models knows it
// (by its prefix: o1, o3, o4, gpt-5): the "ft:" of a fine-tuned model is left
// out, whose id begins with its base model's (ft:o4-mini-2025-04-16:acme::abc123)
// and which refuses max_tokens as its base does — the caller's
// max_completion_tokens was sent as max_tokens and refused. A gateway's
// provider prefix (openai/gpt-5-chat, OpenRouter's) is kept: such a gateway
// takes its own parameters (a temperature it drops, a chat model whose name
// only begins like a reasoning model's), and judging it by OpenAI's rules
// would refuse requests it answers.
func reasoningModelID(model string) string {
	return strings.TrimPrefix(model, "ft:")
}
