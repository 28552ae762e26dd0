package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// defaultScriptedOutput is the answer of a step with no Output.
const defaultScriptedOutput = "{}"

func (s *Scripted) call(ctx context.Context, req *Request, onDelta func(string)) (*Response, error) {
	if req == nil {
		return nil, NewError(s.cfg.Name, KindMisconfigured, "nil request")
	}
	n := s.record(req)
	if s.cfg.OnCall != nil {
		s.cfg.OnCall(n, cloneRequest(req))
	}
	if err := ctx.Err(); err != nil {
		e := contextError(s.cfg.Name, ctx, err)
		e.OutcomeUnknown = false // never started
		return nil, e
	}
	step, derr := s.step(n, req)
	if derr != nil {
		return nil, derr
	}
	return s.run(ctx, n, req, step, onDelta)
}

func (s *Scripted) record(req *Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.perAttempt[req.AttemptID]++
	s.requests = append(s.requests, cloneRequest(req))
	return s.calls
}

// step chooses the step for call n: Respond, else Steps, with the request's
// directives (those for every scripted provider, and those addressed to this
// one by name) applied on top.
func (s *Scripted) step(n int, req *Request) (Step, *Error) {
	var base Step
	switch {
	case s.cfg.Respond != nil:
		base = s.cfg.Respond(n, cloneRequest(req))
	case len(s.cfg.Steps) > 0:
		base = s.cfg.Steps[min(n, len(s.cfg.Steps))-1]
	}
	st, _, err := directiveStep(req, s.cfg.Name, s.cfg.Peers, base)
	if err != nil {
		e := NewError(s.cfg.Name, KindBadRequest, err.Error())
		e.Err = err
		return Step{}, e
	}
	return st, nil
}

func (s *Scripted) run(ctx context.Context, n int, req *Request, st Step, onDelta func(string)) (*Response, error) {
	if st.Latency > 0 {
		t := time.NewTimer(st.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, contextError(s.cfg.Name, ctx, ctx.Err())
		}
	}
	// The first response byte comes when the provider begins answering (an
	// HTTP status, an error body or the stream), never during Latency or a
	// Hang with no bytes: the router learns from it that the call is alive.
	if st.Hang {
		if st.HangAfterBytes {
			NotifyFirstByte(ctx)
			emit(halfOf(st.Output), onDelta)
		}
		<-ctx.Done()
		e := contextError(s.cfg.Name, ctx, ctx.Err())
		if st.HangAfterBytes {
			if e.Kind == KindTimeout {
				e = NewError(s.cfg.Name, KindStreamTimeout, "scripted: the deadline passed mid-answer")
				e.Err = ctx.Err()
			}
			e.Received = true
		}
		return nil, e
	}
	if st.Error != nil {
		e := st.Error.withDefaults(s.cfg.Name)
		if e.RetryAfter == 0 {
			e.RetryAfter = st.RetryAfter
		}
		if e.Received || e.StatusCode != 0 {
			NotifyFirstByte(ctx) // an error the provider answered with
		}
		return nil, e
	}
	if st.Status != 0 && (st.Status < 200 || st.Status > 299) {
		NotifyFirstByte(ctx)
		e := ClassifyStatus(s.cfg.Name, st.Status, "", fmt.Sprintf("scripted HTTP %d", st.Status))
		e.RetryAfter = st.RetryAfter
		return nil, e
	}
	out := st.Output
	if out == "" {
		out = defaultScriptedOutput
	}
	NotifyFirstByte(ctx)
	if kind, ok := streamFailure(st); ok {
		sent := halfOf(out)
		emit(sent, onDelta)
		e := NewError(s.cfg.Name, kind, fmt.Sprintf("scripted %s after %d bytes", kind, len(sent)))
		e.Received = true // the provider had begun answering, as the real adapters mark it
		return nil, e
	}
	emit(out, onDelta)
	resp := &Response{
		Content:      out,
		Model:        s.model(st, req),
		ResponseID:   fmt.Sprintf("scripted-%s-%d", s.cfg.Name, n),
		FinishReason: "stop",
		Created:      time.Now(),
		Usage:        estimateUsage(req, out),
	}
	if st.Usage != nil {
		resp.Usage = *st.Usage
	}
	if st.ToolCalls != "" {
		resp.ToolCalls, resp.FinishReason = json.RawMessage(st.ToolCalls), "tool_calls"
		if st.Output == "" {
			resp.Content = ""
		}
	}
	if req.AttemptID != "" {
		s.SetLookupResult(req.AttemptID, resp)
	}
	return resp, nil
}

// halfOf is the first half of out, cut at a rune boundary.
func halfOf(out string) string {
	h := len(out) / 2
	for h > 0 && !utf8Start(out[h]) {
		h--
	}
	return out[:h]
}

func streamFailure(st Step) (Kind, bool) {
	switch {
	case st.StreamCut:
		return KindStreamCut, true
	case st.StreamStall:
		return KindStreamStalled, true
	case st.StreamMalformed:
		return KindStreamMalformed, true
	}
	return "", false
}

func (s *Scripted) model(st Step, req *Request) string {
	for _, m := range []string{st.Model, req.Model, s.cfg.Model} {
		if m != "" {
			return m
		}
	}
	return "scripted"
}

// emit passes out to onDelta in pieces of at most 8 bytes (split on UTF-8
// boundaries).
func emit(out string, onDelta func(string)) {
	if onDelta == nil {
		return
	}
	for out != "" {
		n := min(8, len(out))
		for n < len(out) && !utf8Start(out[n]) {
			n++
		}
		onDelta(out[:n])
		out = out[n:]
	}
}

func estimateUsage(req *Request, out string) Usage {
	chars := 0
	for _, m := range req.Messages {
		chars += len(m.Content)
	}
	u := Usage{PromptTokens: (chars + 3) / 4, CompletionTokens: (len(out) + 3) / 4}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}
