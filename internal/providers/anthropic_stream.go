package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/routerhq/router/internal/jsontext"
)

// CompleteStream sends the request with the streaming API (SSE events
// message_start, content_block_start/delta/stop, message_delta, message_stop,
// ping, error), consumes it up to message_stop and assembles one Response.
// onDelta (may be nil) sees each text delta.
//
// message_stop ends the message: the answer is whole there. The stream is
// read on to the end of its body (Anthropic ends it right after
// message_stop), so that an HTTP/1.1 connection — a gateway in front of the
// API — is reused rather than closed with its body unread; that drain is best
// effort, bounded by drainGrace: whatever comes after message_stop (more
// events, pings, an error event, an undecodable one, silence, a broken
// connection, a deadline or a cancellation) neither changes nor fails the
// answer.
//
// Deadlines (CallWatch): FirstByteTimeout runs until the response headers
// (passing it is KindTimeout, OutcomeUnknown); from them on, StreamIdleTimeout
// runs between two events (a gap is KindStreamStalled); Timeout bounds the
// whole call (passing it after the headers is KindStreamTimeout). A stream
// that ends without message_stop is KindStreamCut; an undecodable event, a
// content or message event before message_start, a second message_start, a
// content block index that is negative or started twice, a delta for a
// content block never started, and more tool calls than maxStreamToolCalls
// are KindStreamMalformed; an error event before message_stop is
// classified by its type like an error response. A 2xx answer that is the
// whole message JSON, not a stream (a proxy that ignores stream:true), is
// read and judged as an unstreamed answer (streamedWhole). An error without usage
// carries the part of the answer that had come (Error.Partial), however the
// stream ended.
func (p *Anthropic) CompleteStream(ctx context.Context, req *Request, onDelta func(string)) (_ *Response, err error) {
	defer func() { err = p.redact.error(err) }() // the key, out of the provider's text
	params, perr := p.messageParams(req)
	if perr != nil {
		return nil, perr
	}
	// The watch cancels the request when a deadline passes (a blocked body
	// read is only unblocked that way) and then says which deadline it was and
	// whether bytes had come.
	wctx, w := WatchCall(ctx, p.cfg.Name, p.deadlines(true))
	defer w.Stop()
	tctx, trace := withCallTrace(wctx, w)
	trace.expect(p.cfg.Name, answerSSE)

	// The drain after message_stop is cut by cancelling the request's own
	// context (a blocked body read is only unblocked that way).
	sctx, endDrain := context.WithCancel(tctx)
	defer endDrain()
	stream := p.client.Messages.NewStreaming(sctx, params, option.WithMiddleware(p.streamErrorObject))
	defer stream.Close()
	var (
		acc   anthropicAcc
		drain *time.Timer // set at message_stop
	)
	// Every error from here on — cut, stalled, timed out, cancelled (a
	// hedge loser), malformed, an error event, or a whole message refused —
	// carries what had come of the answer when no usage came with it (a
	// gateway whose message_start reports none), or only message_start's
	// provisional output count (no message_delta yet): the provider billed
	// what it had generated.
	defer func() { withPartial(err, acc.partial, !acc.outputCounted) }()
	for stream.Next() {
		if acc.stopped {
			continue // drained: the message is whole (see above)
		}
		w.Chunk()
		if err := acc.add(stream.Current(), onDelta); err != nil {
			// The provider's error, as an OpenAI-compatible stream's bad
			// tool-call index is: failed over, billed with the usage
			// message_start reported.
			e := NewError(p.cfg.Name, KindStreamMalformed, fmt.Sprintf("stream event %d: %s", acc.events, err))
			e.Received = true
			return nil, acc.reported(e)
		}
		if acc.stopped {
			drain = time.AfterFunc(drainGrace(p.cfg.StreamIdleTimeout), endDrain)
		}
	}
	if drain != nil {
		drain.Stop()
	}
	err = stream.Err()
	if acc.stopped {
		// However the drain ended — the end of the body, the grace passing,
		// an error or undecodable event, the connection broken, a deadline
		// or a cancellation — the message was whole at message_stop.
		err = nil
	}
	var am *answeredMessage
	if errors.As(err, &am) {
		// Answered with the whole message in place of the stream (a proxy
		// that ignores stream:true): read as the answer it is.
		return p.streamedWhole(w, trace, req, am.msg, onDelta)
	}
	var ao *answeredErrorObject
	if errors.As(err, &ao) {
		// Answered with an error object in place of the stream
		// (streamErrorObject): the provider's refusal, classified by
		// what it says.
		return nil, p.forRequest(req, ao.e)
	}
	if err != nil {
		e := p.forRequest(req, p.classify(w, trace, err, true))
		if e.Kind == KindStreamCut || e.Kind == KindStreamMalformed {
			e.Message += fmt.Sprintf(" (after %d events)", acc.events)
		}
		// The stream had begun: whatever broke it, the outcome is known (as
		// the OpenAI adapter says). The transport reports the headers of
		// every response as its first byte, an error status's too: a 429,
		// 5xx or 529 is not a stream that had begun, and stays not received
		// as it is unstreamed and through the OpenAI adapter (the race's
		// hedging statistics and deadline labels read Received).
		if _, status, _ := trace.result(); status == 0 || status >= 200 && status <= 299 {
			e.Received = e.Received || w.FirstByte() > 0
		}
		if acc.started {
			// An error event after message_start cut a message that had
			// begun; it did not come in place of the answer, so it is not
			// AnsweredWithError (as an OpenAI-compatible error after chunks
			// of the answer is not): its usage is message_start's
			// (reported), else — a server that reports no input there —
			// the race estimates the prompt and the part that came, and
			// hedging keeps its first byte as an answer's.
			e.AnsweredWithError = false
		}
		return nil, acc.reported(e)
	}
	if !acc.stopped {
		if wctx.Err() != nil {
			return nil, acc.reported(p.classify(w, trace, context.Cause(wctx), true))
		}
		e := NewError(p.cfg.Name, KindStreamCut, fmt.Sprintf("stream ended without message_stop after %d events", acc.events))
		e.Received = true
		return nil, acc.reported(e)
	}
	resp, err := p.finish(acc.id, acc.model, acc.text.String(), acc.toolCalls(), acc.stopReason, acc.usage, true)
	withAnswer(err, acc.partial) // a billed failure: the whole message came (Error.Answer)
	if resp != nil {
		resp.ReasoningContent = reasoningText(acc.thinking.String())
		if !acc.outputCounted && !inputUnreported(acc.usage) {
			// Before the answer is cut at the router's own stops: the
			// provider generated, and billed, all of it. (A usage without
			// its input is dropped whole by finish: the race estimates it.)
			estimateOutput(resp)
		}
		resp.FirstByte = w.FirstByte() // adaptive hedging learns the target's time to first byte
		_, local := anthropicStops(req.Stop)
		cutAtStops(resp, local)
	}
	return resp, err
}

// anthropicAcc assembles a streamed message.
type anthropicAcc struct {
	id, model string
	text      strings.Builder
	// thinking is the text of the message's thinking blocks (the model's
	// reasoning: the /anthropic endpoints of reasoning models think by
	// default), passed on as reasoning_content. Bounded by
	// max_response_bytes, as every event is.
	thinking   strings.Builder
	stopReason string
	usage      anthropic.Usage
	events     int
	started    bool // message_start came, with the usage Anthropic billed
	// outputCounted: a message_delta gave the output count (message_start's
	// is provisional: 1 before any output is generated).
	outputCounted bool
	stopped       bool
	tools         map[int64]*anthropicToolUse // by content block index
	order         []int64
	// blocks holds the index of every content block started: an index
	// started twice would overwrite the tool call there and list it twice
	// (the second call run twice, the first lost). Bounded by
	// max_response_bytes, as every event is.
	blocks map[int64]struct{}
}

type anthropicToolUse struct {
	id, name string
	input    strings.Builder
	// seeded: input holds the input of content_block_start, which the first
	// input_json_delta replaces (see add).
	seeded bool
}

// reported gives the error of a stream broken after message_start (cut,
// stalled, timed out, or an error event such as overloaded_error) the usage
// Anthropic reported there — the exact input and cache tokens it billed, and
// the output tokens counted so far — so that the attempt records them and
// the race does not estimate the prompt with another tokenizer
// (estimatedUsage steps aside for an error with usage). Before message_start
// nothing was reported and e is returned as it is; so it is when no input
// token was reported (input, cache-creation and cache-read tokens all 0):
// an Anthropic-compatible server that counts the input only at the end
// (SGLang's and mlx-node's /v1/messages send input_tokens 0 in
// message_start) said nothing of the prompt it received, and taken as
// billed its prompt would cost nothing. Without usage, the race estimates
// the prompt and the part of the answer that came (Error.Partial).
func (a *anthropicAcc) reported(e *Error) *Error {
	if !a.started || e.Usage != nil {
		return e
	}
	if inputUnreported(a.usage) {
		return e
	}
	return e.billed(anthropicUsage(a.usage), a.id, a.model)
}

// startInput is the input a tool_use block's content_block_start carries, ""
// when it carries none: Anthropic sends {} there and the input in
// input_json_delta events, but a proxy (or a replayed message) may send the
// whole input at the start and no delta.
func startInput(cb anthropic.ContentBlockStartEventContentBlockUnion) string {
	raw := strings.TrimSpace(cb.JSON.Input.Raw())
	switch raw {
	case "", "{}", "null":
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) == nil && len(obj) == 0 {
		return "" // {} with whitespace inside
	}
	return raw
}

// add takes one event of the stream. The error is a stream the router cannot
// assemble into one answer: a content or message event before message_start,
// a second message_start, a content block index that is negative or was
// already started, a delta for a content block never started, or more tool
// calls than maxStreamToolCalls.
func (a *anthropicAcc) add(ev anthropic.MessageStreamEventUnion, onDelta func(string)) error {
	a.events++
	switch ev.Type {
	case "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
		if !a.started {
			// Without it the answer has no id and no input tokens: recorded
			// as the provider's own usage, its prompt would cost nothing.
			return fmt.Errorf("%s before message_start", ev.Type)
		}
	}
	switch ev.Type {
	case "message_start":
		if a.started {
			// Anthropic sends one message_start per stream: a second one
			// would join two messages' texts into one answer and replace
			// the usage billed at the first (its input tokens) with its
			// own. The first start's usage stays for the error (reported).
			return errors.New("a second message_start")
		}
		a.id, a.model = ev.Message.ID, string(ev.Message.Model)
		a.usage = ev.Message.Usage
		a.started = true
	case "content_block_start":
		if err := a.startBlock(ev.Index, ev.ContentBlock.Type == "tool_use"); err != nil {
			return err
		}
		if ev.ContentBlock.Type == "tool_use" {
			if a.tools == nil {
				a.tools = map[int64]*anthropicToolUse{}
			}
			t := &anthropicToolUse{id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
			if in := startInput(ev.ContentBlock); in != "" {
				t.input.WriteString(in)
				t.seeded = true
			}
			a.tools[ev.Index] = t
			a.order = append(a.order, ev.Index)
		} else if ev.ContentBlock.Type == "thinking" {
			a.thinking.WriteString(ev.ContentBlock.Thinking)
		} else if ev.ContentBlock.Text != "" {
			a.appendText(ev.ContentBlock.Text, onDelta)
		}
	case "content_block_delta":
		if _, ok := a.blocks[ev.Index]; !ok {
			// A delta belongs to the block its content_block_start opened:
			// one for a block never started is not part of any answer.
			return fmt.Errorf("content_block_delta for content block %d, which was never started", ev.Index)
		}
		switch ev.Delta.Type {
		case "text_delta":
			a.appendText(ev.Delta.Text, onDelta)
		case "thinking_delta":
			// The reasoning, generated (and billed) before the answer: a
			// stream cut here is costed by it (partial). A redacted_thinking
			// block has no text, and a signature_delta is no output.
			a.thinking.WriteString(ev.Delta.Thinking)
		case "input_json_delta":
			// As the SDK's Message.Accumulate: the deltas are the whole
			// input, replacing what content_block_start carried.
			if t := a.tools[ev.Index]; t != nil && ev.Delta.PartialJSON != "" {
				if t.seeded {
					t.input.Reset()
					t.seeded = false
				}
				t.input.WriteString(ev.Delta.PartialJSON)
			}
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stopReason = string(ev.Delta.StopReason)
		}
		// message_delta usage is cumulative: output tokens, and input tokens
		// when the provider sends them again. A message_delta without a usage
		// object (or without output_tokens in it: a proxy's, or one that only
		// names the stop reason) says nothing about them: taking its zero
		// would drop the output tokens counted so far, and the answer would
		// be recorded and priced as if it had none.
		if ev.Usage.JSON.OutputTokens.Valid() {
			a.usage.OutputTokens = ev.Usage.OutputTokens
			a.outputCounted = true
		}
		if ev.Usage.InputTokens > 0 {
			a.usage.InputTokens = ev.Usage.InputTokens
		}
		if ev.Usage.CacheReadInputTokens > 0 {
			a.usage.CacheReadInputTokens = ev.Usage.CacheReadInputTokens
		}
		if ev.Usage.CacheCreationInputTokens > 0 {
			a.usage.CacheCreationInputTokens = ev.Usage.CacheCreationInputTokens
		}
	case "message_stop":
		a.stopped = true
	}
	return nil
}

// startBlock records the start of the content block at index (a tool_use
// block when tool), or says why the stream is malformed.
func (a *anthropicAcc) startBlock(index int64, tool bool) error {
	if index < 0 {
		return fmt.Errorf("content block index %d is negative", index)
	}
	if _, ok := a.blocks[index]; ok {
		return fmt.Errorf("content block %d was started twice", index)
	}
	if tool && len(a.order) >= maxStreamToolCalls {
		// As an OpenAI-compatible stream's tool-call indexes are bounded:
		// a provider cannot make the router collect calls without end.
		return fmt.Errorf("more than %d tool calls", maxStreamToolCalls)
	}
	if a.blocks == nil {
		a.blocks = map[int64]struct{}{}
	}
	a.blocks[index] = struct{}{}
	return nil
}

func (a *anthropicAcc) appendText(s string, onDelta func(string)) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	if onDelta != nil {
		onDelta(s)
	}
}

// partial is the text of the message received so far — its thinking (the
// provider generated and billed it as output), its text, and each tool
// call's name and input — for Error.Partial.
func (a *anthropicAcc) partial() string {
	var b strings.Builder
	b.WriteString(a.thinking.String())
	b.WriteString(a.text.String())
	for _, i := range a.order {
		t := a.tools[i]
		b.WriteString(t.name)
		b.WriteString(t.input.String())
	}
	return b.String()
}

func (a *anthropicAcc) toolCalls() []openAIToolCall {
	out := make([]openAIToolCall, 0, len(a.order))
	for _, i := range a.order {
		t := a.tools[i]
		args := t.input.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out = append(out, newOpenAIToolCall(t.id, t.name, args))
	}
	return out
}

// openAIToolCall is a tool call in the OpenAI shape the router carries.
type openAIToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func newOpenAIToolCall(id, name, args string) openAIToolCall {
	c := openAIToolCall{ID: id, Type: "function"}
	c.Function.Name, c.Function.Arguments = name, args
	return c
}

// response maps a non-streamed message.
func (p *Anthropic) response(msg *anthropic.Message) (*Response, error) {
	var text, thinking strings.Builder
	var calls []openAIToolCall
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			thinking.WriteString(b.Thinking)
		case "tool_use":
			args := strings.TrimSpace(string(b.Input))
			if args == "" {
				args = "{}"
			}
			calls = append(calls, newOpenAIToolCall(b.ID, b.Name, args))
		}
	}
	// A billed failure carries the message it was built from: the race
	// counts it where the usage leaves a hole (Error.Answer).
	answer := func() string {
		return answerText(len(calls), func(i int) (string, string) { return calls[i].Function.Name, calls[i].Function.Arguments },
			thinking.String(), text.String())
	}
	if msg.StopReason == "" {
		// The message decoded, with the usage it was billed for.
		e := NewError(p.cfg.Name, KindMalformedResponse, "message has no stop_reason")
		if inputUnreported(msg.Usage) {
			e = e.billed(Usage{}, msg.ID, string(msg.Model)) // estimated by the race, as finish's
		} else {
			e = e.billed(anthropicUsage(msg.Usage), msg.ID, string(msg.Model))
		}
		withAnswer(e, answer)
		return nil, e
	}
	resp, err := p.finish(msg.ID, string(msg.Model), text.String(), calls, string(msg.StopReason), msg.Usage, false)
	if resp != nil {
		// As a stream's (anthropicAcc.thinking): the caller's
		// reasoning_content, and counted when the race estimates the answer.
		resp.ReasoningContent = reasoningText(thinking.String())
	}
	withAnswer(err, answer)
	return resp, err
}

// finishReasons maps Anthropic stop reasons to OpenAI finish reasons.
// pause_turn is not among them: a paused turn is no answer (finish).
var finishReasons = map[string]string{
	"end_turn":                      "stop",
	"stop_sequence":                 "stop",
	"max_tokens":                    "length",
	"model_context_window_exceeded": "length",
	"tool_use":                      "tool_calls",
}

// finish maps a complete message (streamed or not) to a Response, or to the
// *Error a complete message can still be: refused, paused, ended with a stop
// reason the router does not know as a whole answer, or with a tool call
// without id or name. Such an error carries the message's usage: the provider
// billed it (billed).
func (p *Anthropic) finish(id, model, text string, calls []openAIToolCall, stopReason string, u anthropic.Usage, streamed bool) (*Response, error) {
	// The id and model are stored in text columns, which refuse NUL and
	// invalid UTF-8: a provider's odd bytes must not make the answer
	// unrecordable (as the OpenAI adapter does).
	id, model = jsontext.SanitizeString(id), jsontext.SanitizeString(model)
	usage := anthropicUsage(u)
	if inputUnreported(u) {
		// No input token reported (inputUnreported): neither the answer
		// nor a billed failure carries the usage, so that the race counts
		// the prompt and the answer itself, marked estimated (answerUsage,
		// estimatedUsage). Kept, the provider's output count came with a
		// prompt of 0 tokens, which the race takes at its word.
		usage = Usage{}
	}
	switch stopReason {
	case "refusal":
		e := NewError(p.cfg.Name, KindContentPolicy, "model refused (stop_reason refusal)")
		e.Code = "refusal"
		return nil, e.billed(usage, id, model)
	case "pause_turn":
		// Anthropic pauses a long-running turn (server tools) and expects the
		// client to send it back to be continued: what came is only the start
		// of the answer, and the router does not continue turns. Returned as
		// a response it could pass the judge and win as if complete; as a
		// failure, the race fails over to a target that answers in full.
		e := NewError(p.cfg.Name, KindEmptyResponse, "the model paused its turn before the answer was complete (stop_reason pause_turn)")
		e.Code = "pause_turn"
		e.Received = true // the provider answered: the outcome is known
		return nil, e.billed(usage, id, model)
	}
	fr, ok := finishReasons[stopReason]
	if !ok {
		// A stop reason the router does not know (or none, on a stream
		// whose message_delta named none) does not say the answer is whole:
		// returned as it is, chat.Judge would refuse it (CompleteFinishReason).
		return nil, brokenOff(p.cfg.Name, "stop_reason", stopReason, streamed, usage, id, model)
	}
	// Anthropic's tool_use ids are unique; an Anthropic-compatible
	// endpoint's (DeepSeek's, Kimi's, GLM's) may not be.
	uniqueToolCallIDs(len(calls), func(i int) *string { return &calls[i].ID })
	if i := incompleteToolCall(len(calls), func(i int) (string, string) {
		return calls[i].ID, calls[i].Function.Name
	}); i >= 0 {
		return nil, malformedToolCall(p.cfg.Name, i, streamed, usage, id, model)
	}
	if fr == "tool_calls" && len(calls) == 0 {
		// stop_reason tool_use and no tool_use block: a caller that branches
		// on the finish reason would run a null tool_calls. Refused as the
		// OpenAI-compatible adapter refuses finish_reason tool_calls
		// without a call: billed, failed over.
		return nil, missingToolCall(p.cfg.Name, "stop_reason", stopReason, streamed, usage, id, model)
	}
	r := &Response{
		Content:      text,
		Model:        model,
		ResponseID:   id,
		FinishReason: fr,
		Usage:        usage,
	}
	if len(calls) > 0 {
		b, err := json.Marshal(calls)
		if err != nil {
			return nil, NewError(p.cfg.Name, KindMalformedResponse, "tool calls do not encode: "+err.Error())
		}
		r.ToolCalls = b
	}
	return r, nil
}

// inputUnreported reports a usage that counts no input token at all
// (input, cache-creation and cache-read tokens all 0). The Messages API
// counts at least one for every request (a request needs a message, and
// the adapter sends no empty one): such a usage is an Anthropic-compatible
// server's that did not count the prompt (SGLang's and mlx-node's
// /v1/messages send input_tokens 0 in message_start), not a free prompt.
func inputUnreported(u anthropic.Usage) bool {
	return u.InputTokens <= 0 && u.CacheCreationInputTokens <= 0 && u.CacheReadInputTokens <= 0
}

// anthropicUsage is a message's usage as the router keeps it: every input
// token billed (cache writes and reads included) as prompt tokens, and the
// cache reads among them as prompt_tokens_details.cached_tokens (OpenAI's
// cached prompt tokens, which the OpenAI-compatible adapter carries).
func anthropicUsage(u anthropic.Usage) Usage {
	r := reportedUsage(sumTokens(u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens), u.OutputTokens, 0)
	r.PromptTokensDetails.CachedTokens = min(clampTokens(u.CacheReadInputTokens), r.PromptTokens)
	return r
}
