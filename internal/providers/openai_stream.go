package providers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/netredact"
)

// CompleteStream sends the request with the streaming API, consumes the stream to
// its end and assembles one Response. onDelta (may be nil) sees each content delta.
// A stream is whole at its finish_reason: one that ends after it, [DONE] or
// not, or whose idle deadline, answerGrace (which keep-alive comments do not
// renew) or timeout passes after it (a gateway that keeps the connection
// open, silent or with keep-alives), is returned with the usage that came,
// and so is one whose finish_reason ended the answer (streamAcc.wholeAtFinish)
// when a chunk that does not decode or reports an error, a broken
// connection, a deadline or a cancellation ends the read before the usage
// chunk.
// The stream is read
// on to [DONE] rather than cut at the usage chunk, so that an HTTP/1.1
// connection (a local vLLM or Ollama) is reused, not closed by a body left
// unread. After the usage chunk (include_usage's last chunk, without
// choices, or usage beside a choice on a chunk without content) that read
// is best effort: whatever ends it — [DONE], the end of
// the body, silence past the idle deadline, a later chunk that does not
// decode or reports an error, a broken connection, the attempt's timeout, a
// deadline or a cancellation — the answer is returned as it stands. Chunks
// with content are still taken into it: gateways in front of Gemini send
// finish_reason "stop" on every chunk, and may send usage part-way.
// Their finish_reason says nothing of the stream's end, as a stream cut
// part-way ends on a "stop" too: a stream whose finish_reason came before
// the end of its answer — on its first chunk with content, or followed by
// more (streamAcc.finishEarly) — is whole only at [DONE]. One that ends,
// breaks or falls silent before it is cut (KindStreamCut, or as the
// deadline or error says), with the usage reported so far (cutBeforeDone).
// An incomplete stream is never returned as a Response: a gap longer than
// StreamIdleTimeout without any response byte (a chunk, or an SSE comment a
// provider sends to keep the connection alive) is KindStreamStalled, an end
// without finish_reason, or with one that does not say the answer is whole
// ("error", "abort": CompleteFinishReason), is KindStreamCut, an undecodable
// chunk or a tool call left without id or name is KindStreamMalformed, an
// error the provider reports inside the stream is classified as that error,
// and Timeout passing mid-stream is KindStreamTimeout (all known outcomes: the
// provider answered). An error without usage carries the part of the answer
// that had come (Error.Partial), however the stream ended.
func (p *OpenAI) CompleteStream(ctx context.Context, req *Request, onDelta func(string)) (_ *Response, err error) {
	defer func() { err = p.redact.error(err) }() // the key, out of the provider's text
	creq, perr := p.chatRequest(req)
	if perr != nil {
		return nil, perr
	}
	creq.Stream = true
	creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}

	// The watch cancels the request when a deadline passes: RecvRaw blocks in a
	// body read, and cancelling the request's context is what unblocks it. The
	// watch then says which deadline it was and whether bytes had come.
	wctx, w := WatchCall(ctx, p.cfg.Name, Deadlines{FirstByte: p.cfg.FirstByteTimeout, Idle: p.cfg.StreamIdleTimeout, Total: p.cfg.Timeout, Stream: true})
	defer w.Stop()
	tctx, trace := withCallTrace(wctx, w)
	// The provider's id of the request (x-request-id), on whatever error
	// its response led to, for the operator's report to the provider.
	defer func() { trace.noteRequestID(err) }()
	trace.sse = true // comments and event lines are taken out of the body (sseFilter)
	trace.expect(p.cfg.Name, answerSSE)

	// The read after a whole answer's finish_reason is cut by cancelling the
	// request's own context (answerGrace).
	sctx, endRead := context.WithCancelCause(tctx)
	defer endRead(nil)
	grace := answerGrace{end: endRead}
	defer grace.stop()
	stream, err := p.client.CreateChatCompletionStream(sctx, wire(creq, req, trace))
	if err != nil {
		return nil, p.classify(w, trace, err)
	}
	defer stream.Close()

	var (
		acc   streamAcc
		chunk openai.ChatCompletionStreamResponse
		whole bool // the usage chunk came after a finish_reason (see above)
	)
	// Every error from here on — cut, stalled, timed out, cancelled (a
	// hedge loser), malformed, reported in the stream, or a whole answer
	// refused — carries what had come of the answer: the provider billed it.
	defer func() { withPartial(err, acc.partial, false) }()
	for {
		// RecvRaw reads the lines and reports the stream's errors as Recv does;
		// decodeChunk then decodes what Recv would, faster (see there).
		raw, err := stream.RecvRaw()
		if err == nil {
			err = decodeStreamChunk(raw, &chunk)
		}
		if err != nil && (acc.finishEarly || acc.finishFirst && !whole) {
			// The finish_reason came with the answer's chunks, not at its
			// end (streamAcc.finishEarly), or with its first chunk and no
			// usage chunk has ended it yet (finishFirst): only [DONE] says
			// it is whole. A stream cut part-way ends the same way, its
			// last chunk carrying "stop" as every other did.
			if errors.Is(err, io.EOF) && trace.streamDone() {
				return p.streamed(w, creq.Model, &acc)
			}
			return nil, p.cutBeforeDone(w, trace, &acc, err)
		}
		if whole && err != nil {
			// However the stream ended after its usage chunk — [DONE], the
			// end of the body, silence past the idle deadline, an
			// undecodable chunk, the connection broken, the attempt's
			// timeout, the job's deadline or a cancellation — the answer
			// was whole.
			return p.streamed(w, creq.Model, &acc)
		}
		if err == nil {
			w.Chunk()
			if apiErr := chunkError(raw); apiErr != nil && (whole && !acc.finishEarly || acc.wholeAtFinish()) {
				return p.streamed(w, creq.Model, &acc) // reported after the answer was whole
			} else if apiErr != nil {
				// The provider reported an error after the stream began
				// (OpenRouter: an "error" object beside a chunk whose
				// finish_reason is "error"): classified as that error, with
				// what the stream reported so far.
				first := acc.chunks == 0
				_ = acc.add(chunk, nil, nil)
				acc.reasoningAlt.WriteString(chunkReasoning(raw))
				if acc.sawDelta && requestStatus(apiErr.HTTPStatusCode) {
					// vLLM's error object names its code as a status
					// (objectError); a 400 (413, 422) after the answer
					// began is no verdict on the request (streamedStatus):
					// it is classified by its type and message, as the
					// same code in OpenRouter's {"error": {...}} is.
					apiErr.Code = strconv.Itoa(apiErr.HTTPStatusCode)
					apiErr.HTTPStatusCode = 0
				}
				e := classifyAnswered(p.cfg.Name, apiErr, !acc.sawDelta)
				e.Message = truncate(fmt.Sprintf("error reported in the stream after %d chunks: %s", acc.chunks-1, e.Message))
				e.AnsweredWithError = refusedInStream(e, first && acc.content.Len() == 0 && acc.refusal.Len() == 0 && len(acc.tools) == 0)
				return nil, e.billed(openAIUsage(acc.usage), acc.id, acc.model)
			}
			if acc.serviceTier == "" {
				// OpenAI names it on every chunk; go-openai's chunk has
				// no member for it.
				acc.serviceTier = topString(raw, "service_tier")
			}
			// A tool call's extra_content (Gemini's thought signature)
			// is read from the chunk's bytes: go-openai's delta has no
			// member for it (chunkToolCallExtras).
			acc.reasoningAlt.WriteString(chunkReasoning(raw))
			if err := acc.add(chunk, chunkToolCallExtras(raw), onDelta); err != nil && whole && !acc.finishEarly {
				return p.streamed(w, creq.Model, &acc) // broken after the answer was whole
			} else if err != nil {
				e := NewError(p.cfg.Name, KindStreamMalformed, fmt.Sprintf("stream chunk %d: %s", acc.chunks, err))
				e.Received = true
				return nil, e
			}
			if acc.finishReason != "" && CompleteFinishReason(acc.finishReason) && chunk.Usage != nil && (len(chunk.Choices) == 0 || acc.sawDelta && !acc.lastOnContent) {
				// The usage chunk after the finish_reason: the answer is whole
				// (see above). So is a chunk without content that carries
				// the usage beside its choice (DeepSeek and Mistral put it
				// on the finish_reason's empty delta), once the answer
				// began (a gateway's "stop" and usage on every chunk may
				// come on its reasoning): without it, such a stream held
				// open without [DONE] was read on until stream_idle_timeout.
				whole = true
			}
			d := p.answerGrace(&acc, whole)
			grace.set(d > 0 && acc.finishReason != "" && !acc.finishEarly && !acc.lastOnContent && (!acc.finishFirst || whole), d)
			continue
		}
		if acc.finishReason != "" && (errors.Is(err, io.EOF) || brokenAfterEnd(w, err)) {
			// A stream that ends after its finish_reason is whole, [DONE] or
			// not, and however its connection ended: closed, or reset by a
			// gateway right after the last event (brokenAfterEnd).
			return p.streamed(w, creq.Model, &acc)
		}
		if acc.finishReason != "" && (grace.ended(sctx) || w.Stalled(err) || !acc.lastOnContent && streamTimedOut(w, err)) {
			// The grace after the finish_reason ran out (answerGrace: a
			// gateway that keeps the connection open with keep-alives after
			// the last chunk), or the idle deadline or the attempt's timeout
			// passed after it (after a chunk without content: while the last
			// chunk read carried content, a gateway's "stop" on every chunk
			// may still be followed by more of the answer, and only silence
			// past the idle deadline, which keep-alives renew, ends it): the
			// answer is whole, and only its usage chunk
			// or [DONE] was still to come (or the server ignores
			// include_usage). It is returned with the usage that came, as a
			// stream that ends there is, not discarded.
			return p.streamed(w, creq.Model, &acc)
		}
		if _, over := tooLarge("", err); acc.wholeAtFinish() && !over {
			// Whole at its finish_reason, only the usage chunk or [DONE]
			// awaited: whatever ends the read — the job's deadline, a
			// cancellation, a chunk that does not decode or reports an error
			// (which a chunk error does above), a broken connection —
			// returns the answer, as it does after the usage chunk and as
			// the body ending there does. Only max_response_bytes keeps its
			// meaning.
			return p.streamed(w, creq.Model, &acc)
		}
		if acc.chunks == 0 && errors.Is(err, io.EOF) {
			// Not a stream at all: the server ignored stream:true and sent
			// the whole chat.completion JSON (read as before, as the
			// loosely labelled answers of compatible servers are).
			body := trace.streamPlainBody()
			resp, ok := plainCompletion(body)
			if len(resp.Choices) == 0 {
				// Or an error object in place of the answer (go-openai
				// reads a one-line body as a stream without a chunk):
				// the provider refusing the request, as unstreamed.
				_, status, _ := trace.result()
				if e := openAIAnsweredError(p.cfg.Name, status, body); e != nil {
					return nil, e.billed(openAIUsage(resp.Usage), resp.ID, resp.Model)
				}
			}
			if ok {
				return p.streamedPlain(w, resp, body, creq.Model, onDelta)
			}
		}
		e := p.streamError(w, trace, &acc, err)
		e.Received = true // the stream had begun: whatever broke it, the outcome is known
		return nil, e
	}
}

// wholeAtFinish reports whether the answer is whole at its finish_reason,
// before its usage chunk (the conditions of the answer grace): a whole
// ending, on a chunk without content or followed by one, after the answer
// began (sawDelta: a gateway's "stop" on every chunk may come on the
// reasoning, before the content), and neither followed by more of the
// answer (finishEarly) nor on its first chunk (finishFirst), where only
// [DONE] or the usage chunk says it is whole. What follows is best effort.
func (a *streamAcc) wholeAtFinish() bool {
	return a.sawDelta && a.finishReason != "" && CompleteFinishReason(a.finishReason) && !a.finishEarly && !a.finishFirst && !a.lastOnContent
}

// answerGrace is how long the read of a stream goes on after its
// finish_reason (answerGrace), keep-alives or not: stream_idle_timeout, the
// silence after which such a stream is returned whole anyway (0, no grace,
// without one), while its usage chunk may still come (a provider may send it
// late, and it is what the answer is billed by) or, when the finish_reason
// came on a chunk of the answer, more of the answer may (a gateway's "stop"
// on every chunk); drainGrace once only [DONE] is left — OpenAI's shape, the
// finish_reason on an empty delta and then the usage chunk.
func (p *OpenAI) answerGrace(acc *streamAcc, whole bool) time.Duration {
	if whole && !acc.finishOnContent && !acc.finishFirst {
		return drainGrace(p.cfg.StreamIdleTimeout)
	}
	return max(p.cfg.StreamIdleTimeout, 0)
}

// streamTimedOut reports whether err is the attempt's timeout passing
// after the stream began (KindStreamTimeout).
func streamTimedOut(w *CallWatch, err error) bool {
	e := w.Classify(err)
	return err != nil && e != nil && e.Kind == KindStreamTimeout
}

// streamed is the answer a stream assembled once it is whole (its
// finish_reason came).
func (p *OpenAI) streamed(w *CallWatch, model string, acc *streamAcc) (*Response, error) {
	resp, err := p.finish(acc.id, cmp.Or(acc.model, model), acc.created, acc.content.String(), acc.refusal.String(), acc.finishSaid, acc.usage, acc.toolCalls(), true)
	if resp != nil {
		resp.FirstByte = w.FirstByte()
		resp.SystemFingerprint = fingerprint(acc.systemFingerprint)
		resp.ReasoningContent = reasoningText(acc.reasoningText())
		resp.ServiceTier = providerServiceTier(acc.serviceTier)
	}
	withAnswer(err, acc.partial) // a billed failure: the whole answer came (Error.Answer)
	return resp, err
}

// cutBeforeDone is the error of a stream whose finish_reason came early
// (streamAcc.finishEarly) and that ended, or broke, before [DONE]: the
// answer may have been cut part-way, so it is not returned. It carries the
// usage a usage chunk reported part-way, if one came, and the part of the
// answer that had come: that usage counts only the output up to it.
func (p *OpenAI) cutBeforeDone(w *CallWatch, trace *callTrace, acc *streamAcc, err error) *Error {
	e := p.streamError(w, trace, acc, err)
	if e.Kind == KindStreamCut && errors.Is(err, io.EOF) && trace.streamErrLine() == nil {
		// The provider's finish_reason is cut like its other text (brokenOff):
		// the message goes into the attempt's error, its span status and the
		// tenant's view.
		e.Message = truncate(fmt.Sprintf("stream ended without [DONE] after %d chunks: its finish_reason %q came on chunks of the answer, not at its end", acc.chunks, truncateTo(acc.finishSaid, maxCode)))
	}
	e.Received = true
	if e.Usage == nil && acc.usage != (openai.Usage{}) {
		e = e.billed(openAIUsage(acc.usage), acc.id, acc.model)
		e.Partial = acc.partial()
	}
	return e
}

// streamError classifies a failed RecvRaw or decodeChunk (whose errors are
// encoding/json's). A deadline or cancellation is checked first: the watch
// knows which one cut the stream.
func (p *OpenAI) streamError(w *CallWatch, trace *callTrace, acc *streamAcc, err error) *Error {
	var (
		e      *Error
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
		apiErr *openai.APIError
	)
	if e := w.Classify(err); e != nil {
		return e
	}
	if e, ok := tooLarge(p.cfg.Name, err); ok {
		return e
	}
	if line := trace.streamErrLine(); line != nil && !errors.As(err, &apiErr) {
		// An error event go-openai could not decode ({"error": "text"}:
		// TGI, LM Studio, proxies): RecvRaw gave neither a line nor an
		// error, or the end of the body. Classified by what it says.
		code, typ, msg := bodyError(line)
		status := 0
		if !acc.sawDelta {
			status = codeStatus(code) // before the answer: as the status it names (classifyAnswered)
		}
		e = classifyHTTP(p.cfg.Name, status, code, typ, msg)
		e.StatusCode = 0 // HTTP said 200
		e.Message = truncate(fmt.Sprintf("error reported in the stream after %d chunks: %s", acc.chunks, e.Message))
		e.AnsweredWithError = refusedInStream(e, acc.chunks == 0)
		e.Err = err
		return e.billed(openAIUsage(acc.usage), acc.id, acc.model)
	}
	switch {
	case errors.Is(err, io.EOF):
		e = NewError(p.cfg.Name, KindStreamCut,
			fmt.Sprintf("stream ended without finish_reason after %d chunks", acc.chunks))
	case errors.As(err, &synErr), errors.As(err, &typErr),
		errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		e = NewError(p.cfg.Name, KindStreamMalformed,
			fmt.Sprintf("stream chunk %d does not decode: %s", acc.chunks+1, truncate(err.Error())))
	case undecodableBody(err):
		// The stream's headers came and said gzip; its body is not.
		_, status, _ := trace.result()
		e = NewError(p.cfg.Name, KindStreamMalformed,
			fmt.Sprintf("%s (after %d chunks)", undecodableMessage(status, err), acc.chunks))
	case errors.As(err, &apiErr):
		e = classifyAnswered(p.cfg.Name, err, !acc.sawDelta) // an error event sent inside the stream
		e.AnsweredWithError = refusedInStream(e, acc.chunks == 0)
		return e
	default:
		e = NewError(p.cfg.Name, KindStreamCut,
			fmt.Sprintf("stream broken after %d chunks: %s", acc.chunks, truncate(netredact.ErrorText(err))))
	}
	e.Err = err
	return e
}

// streamAcc assembles a streamed answer.
type streamAcc struct {
	id, model string
	created   int64
	// systemFingerprint is the last one a chunk named.
	systemFingerprint string
	content           strings.Builder
	refusal           strings.Builder
	// reasoning is the deltas' reasoning_content (DeepSeek's reasoner,
	// vLLM's and SGLang's reasoning parsers): kept for the Response, but
	// not content — it neither starts the answer (sawDelta) nor counts as
	// its last chunk (lastOnContent). reasoningAlt is the deltas'
	// reasoning (newer vLLM, OpenRouter: chunkReasoning), taken the same
	// way when no reasoning_content came (reasoningText).
	reasoning    strings.Builder
	reasoningAlt strings.Builder
	// serviceTier is the first service_tier a chunk named.
	serviceTier string
	// finishReason is the last finish_reason, mapped onto the names the
	// router knows (wholeFinishReason); finishSaid is the provider's own
	// word, for messages.
	finishReason string
	finishSaid   string
	usage        openai.Usage
	chunks       int
	// sawDelta: a chunk carried content, a refusal or a tool call.
	sawDelta bool
	// finishEarly: the stream's finish_reason does not mark its end — a
	// delta came after one (a gateway in front of Gemini sends
	// finish_reason "stop" on every chunk). Such a stream is whole only at
	// [DONE] (CompleteStream).
	finishEarly bool
	// finishFirst: the first chunk with a delta carried the finish_reason
	// — a one-chunk answer (vLLM and TGI send the last token with it), or a
	// Gemini-style stream cut after its first chunk. Until its usage chunk
	// (which ends the first, as it ends any answer) it is whole only at
	// [DONE], as finishEarly's is.
	finishFirst bool
	// lastOnContent: the last chunk read carried content, a refusal or a
	// tool call. The grace after a finish_reason (answerGrace), and the
	// attempt's timeout returning the answer, start only after a chunk
	// without any (an empty delta, the usage chunk): a gateway that puts
	// "stop" on every chunk, slow upstream and sending keep-alives meanwhile,
	// would otherwise have its answer cut at the grace and returned as whole.
	lastOnContent bool
	// finishOnContent: the finish_reason came on a chunk with content, a
	// refusal or a tool call (answerGrace).
	finishOnContent bool
	// tools holds the tool calls by the stream's index: deltas name a call,
	// then append to its arguments. Each index holds the calls sent at it in
	// order — one, but a provider that sends each call whole at the same
	// index (distinct ids) gets one call each — and an index the stream
	// skipped holds none. ncalls counts them all.
	tools  [][]*streamToolCall
	ncalls int
}

// streamToolCall is one tool call of a stream being assembled. Its arguments
// come in many deltas (one per token or so): they go into a strings.Builder,
// not onto Function.Arguments with +=, which copied everything so far for
// each delta — 20,000 deltas of 150 bytes allocated 28.8 GB.
//
// extra is the call's extra_content (Gemini's thought signature), from the
// delta that carried it — the call's first, or a later one carrying only it
// — the last one's if more did (toolCall).
type streamToolCall struct {
	openai.ToolCall
	args  strings.Builder
	shape argsShape // of args, for newCallByName
	extra json.RawMessage
}

// maxStreamToolCalls bounds the tool calls of one streamed answer — the
// tool-call index an OpenAI-compatible stream may name, the tool_use blocks
// of an Anthropic one — so a provider cannot make the router allocate
// without end.
const maxStreamToolCalls = 128

// addToolCall merges one tool-call delta into the call it continues, or
// starts a call. A delta with an index continues the call last started at
// that index, unless it is the next call sent at the same index: it names an
// id other than that call's, or, without an id, a function other than the one
// that call named (later deltas without an id or a name continue it). A
// delta without an index starts a call when it names an id, unless the id is
// the last call's (a provider that repeats the id in every delta); without an
// id it continues the last call, unless it names a function and the last
// call is whole already (newCallByName): Gemini's OpenAI compatibility layer
// and some proxies send parallel calls each whole, with neither an index nor
// an id, and their arguments were concatenated into one broken call. An index
// outside [0, 128), or more than 128 calls, is the provider's error, not a
// reason to crash or allocate. extra is the delta's extra_content, or nil.
func (a *streamAcc) addToolCall(d openai.ToolCall, extra json.RawMessage) error {
	i := len(a.tools)
	if d.Index != nil {
		i = *d.Index
	} else if last := a.lastCall(); i > 0 && (d.ID == "" && !newCallByName(d, last, true) || d.ID != "" && d.ID == last.ID) {
		i-- // a continuation without an index belongs to the last call
	}
	if i < 0 || i >= maxStreamToolCalls {
		return fmt.Errorf("tool call index %d is outside 0..%d", i, maxStreamToolCalls-1)
	}
	for len(a.tools) <= i {
		a.tools = append(a.tools, nil)
	}
	calls := a.tools[i]
	if n := len(calls); n == 0 || d.ID != "" && calls[n-1].ID != "" && d.ID != calls[n-1].ID || d.ID == "" && newCallByName(d, calls[n-1], false) {
		if a.ncalls >= maxStreamToolCalls {
			return fmt.Errorf("more than %d tool calls", maxStreamToolCalls)
		}
		a.ncalls++
		calls = append(calls, &streamToolCall{ToolCall: openai.ToolCall{Type: openai.ToolTypeFunction}})
		a.tools[i] = calls
	}
	tc := calls[len(calls)-1]
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Type != "" {
		tc.Type = d.Type
	}
	if d.Function.Name != "" {
		tc.Function.Name = d.Function.Name
	}
	tc.args.WriteString(d.Function.Arguments)
	tc.shape.add(d.Function.Arguments)
	if extra != nil {
		tc.extra = extra
	}
	return nil
}

// newCallByName reports whether d, a tool-call delta without an id, starts a
// call after last rather than continuing it: OpenAI names the function only
// in a call's first delta, so a delta naming one after last named its own is
// the next call when it names another function, or — without an index, where
// parallel calls of one function come each whole (Gemini) — the same function
// once last's arguments are a whole JSON value. A provider that repeats the
// name in every delta of a call still has its deltas joined until the
// arguments are whole.
func newCallByName(d openai.ToolCall, last *streamToolCall, indexless bool) bool {
	if d.Function.Name == "" || last.Function.Name == "" {
		return false
	}
	if d.Function.Name != last.Function.Name {
		return true
	}
	return indexless && last.shape.whole(last.args.String())
}

// lastCall is the call last started at the highest index, which a delta
// without an index continues; a zero call when there is none.
func (a *streamAcc) lastCall() *streamToolCall {
	if n := len(a.tools); n > 0 {
		if calls := a.tools[n-1]; len(calls) > 0 {
			return calls[len(calls)-1]
		}
	}
	return &streamToolCall{}
}

// reasoningText is the stream's reasoning: its reasoning_content deltas,
// or, when none came, its reasoning deltas (a provider that sends both sends
// the same text twice).
func (a *streamAcc) reasoningText() string {
	if a.reasoning.Len() > 0 {
		return a.reasoning.String()
	}
	return a.reasoningAlt.String()
}

// partial is the text of the answer received so far — its reasoning
// (reasoningText: the provider generated and billed it as output), content,
// refusal, and each tool call's name and arguments — for Error.Partial.
func (a *streamAcc) partial() string {
	var b strings.Builder
	b.WriteString(a.reasoningText())
	b.WriteString(a.content.String())
	b.WriteString(a.refusal.String())
	for _, calls := range a.tools {
		for _, tc := range calls {
			b.WriteString(tc.Function.Name)
			b.WriteString(tc.args.String())
		}
	}
	return b.String()
}

// toolCalls is the assembled tool calls in the stream's index order, without
// stream indexes, each with its extra_content if a delta carried one.
func (a *streamAcc) toolCalls() []toolCall {
	out := make([]toolCall, 0, a.ncalls)
	for _, calls := range a.tools {
		// An index no delta named holds no call: the stream's indexes
		// skipped it (some gateways number a lone call 1, after a text block
		// at 0). Only a call that deltas filled in part is refused
		// (incompleteToolCall).
		for _, tc := range calls {
			if tc.ID == "" && tc.Function.Name == "" && tc.args.Len() == 0 {
				continue // named nothing, as an index skipped
			}
			c := tc.ToolCall
			c.Function.Arguments = tc.args.String()
			c.Index = nil
			out = append(out, toolCall{ToolCall: c, ExtraContent: tc.extra})
		}
	}
	return out
}

// add takes one chunk into the answer. extras is each tool-call delta's
// extra_content, by choice and position (chunkToolCallExtras), or nil.
func (a *streamAcc) add(ch openai.ChatCompletionStreamResponse, extras [][]json.RawMessage, onDelta func(string)) error {
	a.chunks++
	a.lastOnContent = false
	if ch.ID != "" {
		a.id = ch.ID
	}
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.Created != 0 {
		a.created = ch.Created
	}
	if ch.SystemFingerprint != "" {
		a.systemFingerprint = ch.SystemFingerprint
	}
	if ch.Usage != nil {
		a.usage = *ch.Usage
	}
	for ci, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		var extra []json.RawMessage
		if ci < len(extras) {
			extra = extras[ci]
		}
		finish := c.FinishReason != "" && c.FinishReason != openai.FinishReasonNull
		if c.Delta.Content != "" || c.Delta.Refusal != "" || len(c.Delta.ToolCalls) > 0 {
			if a.finishReason != "" {
				a.finishEarly = true
			} else if finish && !a.sawDelta {
				a.finishFirst = true
			}
			a.sawDelta = true
		}
		if d := c.Delta.Content; d != "" {
			a.content.WriteString(d)
			if onDelta != nil {
				onDelta(d)
			}
		}
		a.refusal.WriteString(c.Delta.Refusal)
		a.reasoning.WriteString(c.Delta.ReasoningContent)
		if c.Delta.Content != "" || c.Delta.Refusal != "" || len(c.Delta.ToolCalls) > 0 {
			a.lastOnContent = true
		}
		for ti, tc := range c.Delta.ToolCalls {
			var x json.RawMessage
			if ti < len(extra) {
				x = extra[ti]
			}
			if err := a.addToolCall(tc, x); err != nil {
				return err
			}
		}
		if finish {
			// Named as the Response will name it (wholeFinishReason): a
			// whole ending under another name ("end_turn", "eos_token",
			// "max_tokens") ends the answer while the stream is read, as
			// "stop" and "length" do, not only once it is built.
			a.finishSaid = string(c.FinishReason)
			a.finishReason = wholeFinishReason(a.finishSaid)
			a.finishOnContent = c.Delta.Content != "" || c.Delta.Refusal != "" || len(c.Delta.ToolCalls) > 0
		}
	}
	return nil
}
