package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// errStreamStalled is the cancellation cause the idle watch sets.
var errStreamStalled = errors.New("stream idle timeout")

// CompleteStream sends the request with the streaming API, consumes the stream to
// its end and assembles one Response. onDelta (may be nil) sees each content delta.
// An incomplete stream is never returned as a Response: a gap longer than
// StreamIdleTimeout is KindStreamStalled, an end without finish_reason is
// KindStreamCut, an undecodable chunk is KindStreamMalformed, and Timeout passing
// mid-stream is KindTimeout with OutcomeUnknown.
func (p *OpenAI) CompleteStream(ctx context.Context, req *Request, onDelta func(string)) (*Response, error) {
	creq, perr := p.chatRequest(req)
	if perr != nil {
		return nil, perr
	}
	creq.Stream = true
	creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}

	actx, cancel := p.attemptContext(ctx)
	defer cancel()
	// The idle watch cancels the request with errStreamStalled as cause: Recv
	// blocks in a body read, and cancelling the request's context is what
	// unblocks it. The cause then tells a stall from a deadline or a cancel.
	sctx, stop := context.WithCancelCause(actx)
	defer stop(nil)
	tctx, trace := withCallTrace(sctx)

	stream, err := p.client.CreateChatCompletionStream(tctx, creq)
	if err != nil {
		return nil, p.classify(actx, trace, err)
	}
	defer stream.Close()

	idle := newIdleWatch(p.cfg.StreamIdleTimeout, func() { stop(errStreamStalled) })
	defer idle.stop()

	var acc streamAcc
	for {
		chunk, err := stream.Recv()
		if err == nil {
			idle.touch()
			if err := acc.add(chunk, onDelta); err != nil {
				return nil, NewError(p.cfg.Name, KindStreamMalformed, fmt.Sprintf("stream chunk %d: %s", acc.chunks, err))
			}
			continue
		}
		if errors.Is(err, io.EOF) && acc.finishReason != "" {
			return p.finish(acc.id, acc.model, acc.created, acc.content.String(), acc.refusal.String(), acc.finishReason, acc.usage, acc.toolCalls())
		}
		return nil, p.streamError(sctx, actx, &acc, err)
	}
}

// streamError classifies a failed Recv. A stall is checked first: a cause set by
// the idle watch is only ever the first cancellation of sctx.
func (p *OpenAI) streamError(sctx, actx context.Context, acc *streamAcc, err error) *Error {
	var (
		e      *Error
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
		apiErr *openai.APIError
	)
	if e, ok := tooLarge(p.cfg.Name, err); ok {
		return e
	}
	switch {
	case errors.Is(context.Cause(sctx), errStreamStalled):
		e = NewError(p.cfg.Name, KindStreamStalled,
			fmt.Sprintf("no stream chunk for %s after %d chunks", p.cfg.StreamIdleTimeout, acc.chunks))
	case actx.Err() != nil:
		e = contextError(p.cfg.Name, actx, err)
		if e.Kind == KindTimeout {
			e.Message = fmt.Sprintf("deadline passed mid-stream after %d chunks", acc.chunks)
		}
	case errors.Is(err, io.EOF):
		e = NewError(p.cfg.Name, KindStreamCut,
			fmt.Sprintf("stream ended without finish_reason after %d chunks", acc.chunks))
	case errors.As(err, &synErr), errors.As(err, &typErr),
		errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		e = NewError(p.cfg.Name, KindStreamMalformed,
			fmt.Sprintf("stream chunk %d does not decode: %s", acc.chunks+1, truncate(err.Error())))
	case errors.As(err, &apiErr):
		return Classify(p.cfg.Name, err) // an error event sent inside the stream
	default:
		e = NewError(p.cfg.Name, KindStreamCut,
			fmt.Sprintf("stream broken after %d chunks: %s", acc.chunks, truncate(err.Error())))
	}
	e.Err = err
	return e
}

// streamAcc assembles a streamed answer.
type streamAcc struct {
	id, model    string
	created      int64
	content      strings.Builder
	refusal      strings.Builder
	finishReason string
	usage        openai.Usage
	chunks       int
	tools        []*openai.ToolCall // by index: deltas name the call, then append to its arguments
}

// maxStreamToolCalls bounds the tool-call index a stream may name, so a
// provider cannot make the router allocate without end.
const maxStreamToolCalls = 128

// addToolCall merges one tool-call delta. An index outside [0, 128) is the
// provider's error, not a reason to crash or allocate.
func (a *streamAcc) addToolCall(d openai.ToolCall) error {
	i := len(a.tools)
	if d.Index != nil {
		i = *d.Index
	} else if d.ID == "" && i > 0 {
		i-- // a continuation without an index belongs to the last call
	}
	if i < 0 || i >= maxStreamToolCalls {
		return fmt.Errorf("tool call index %d is outside 0..%d", i, maxStreamToolCalls-1)
	}
	for len(a.tools) <= i {
		a.tools = append(a.tools, &openai.ToolCall{Type: openai.ToolTypeFunction})
	}
	tc := a.tools[i]
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Type != "" {
		tc.Type = d.Type
	}
	if d.Function.Name != "" {
		tc.Function.Name = d.Function.Name
	}
	tc.Function.Arguments += d.Function.Arguments
	return nil
}

// toolCalls is the assembled tool calls, without stream indexes.
func (a *streamAcc) toolCalls() []openai.ToolCall {
	out := make([]openai.ToolCall, 0, len(a.tools))
	for _, tc := range a.tools {
		c := *tc
		c.Index = nil
		out = append(out, c)
	}
	return out
}

func (a *streamAcc) add(ch openai.ChatCompletionStreamResponse, onDelta func(string)) error {
	a.chunks++
	if ch.ID != "" {
		a.id = ch.ID
	}
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.Created != 0 {
		a.created = ch.Created
	}
	if ch.Usage != nil {
		a.usage = *ch.Usage
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		if d := c.Delta.Content; d != "" {
			a.content.WriteString(d)
			if onDelta != nil {
				onDelta(d)
			}
		}
		a.refusal.WriteString(c.Delta.Refusal)
		for _, tc := range c.Delta.ToolCalls {
			if err := a.addToolCall(tc); err != nil {
				return err
			}
		}
		if c.FinishReason != "" && c.FinishReason != openai.FinishReasonNull {
			a.finishReason = string(c.FinishReason)
		}
	}
	return nil
}

// idleWatch calls fire when touch has not been called for d. A zero d disables it.
type idleWatch struct {
	d time.Duration
	t *time.Timer
}

func newIdleWatch(d time.Duration, fire func()) *idleWatch {
	if d <= 0 {
		return &idleWatch{}
	}
	return &idleWatch{d: d, t: time.AfterFunc(d, fire)}
}

func (w *idleWatch) touch() {
	if w.t != nil {
		w.t.Reset(w.d)
	}
}

func (w *idleWatch) stop() {
	if w.t != nil {
		w.t.Stop()
	}
}
