package providers

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// Step tells the scripted provider how to answer one call. The zero Step answers
// at once with the default output `{}`. Fields are applied in this order:
// Latency, Hang, Error, Status, stream flags, success.
type Step struct {
	// Latency is waited before answering (cut short by ctx, which then gives the
	// same errors as Hang).
	Latency time.Duration
	// Output is the content of a successful answer ("" means `{}`). It may be
	// deliberately schema- or contract-invalid.
	Output string
	// Error is returned as a copy, with Provider (and an empty Fault or Action)
	// filled from the taxonomy.
	Error *Error
	// Status returns the error the taxonomy gives this HTTP status (a 2xx status
	// answers normally).
	Status int
	// RetryAfter is set on the Error or Status error.
	RetryAfter time.Duration
	// Hang blocks until ctx is done: a passed deadline gives KindTimeout with
	// OutcomeUnknown, a cancellation KindCancelled.
	Hang bool
	// HangAfterBytes, with Hang, delivers half the output before hanging: the
	// provider had begun answering, so the error is marked Received and a
	// passed deadline is KindStreamTimeout, a known outcome (SPEC §15).
	HangAfterBytes bool
	// StreamCut, StreamStall and StreamMalformed deliver half the output (as
	// deltas, to CompleteStream) and then fail with KindStreamCut,
	// KindStreamStalled or KindStreamMalformed, marked Received (the provider
	// had begun answering, as the real adapters mark it). Complete fails the
	// same way, as an adapter that streams internally would.
	StreamCut       bool
	StreamStall     bool
	StreamMalformed bool
	// Model is the answering model reported (default: Request.Model, then
	// ScriptedConfig.Model, then "scripted").
	Model string
	// Usage is reported as given; nil estimates it (characters / 4).
	Usage *Usage
	// ToolCalls, when set, is the answer's tool calls as OpenAI's JSON array;
	// the finish reason is then tool_calls.
	ToolCalls string
}

// ScriptedConfig configures a scripted provider.
type ScriptedConfig struct {
	Name  string // default "scripted"
	Model string
	// Steps are consumed one per call, in order; the last repeats. Empty: every
	// call answers `{}`.
	Steps []Step
	// Respond, when non-nil, chooses the step instead of Steps. call counts from 1.
	Respond func(call int, req *Request) Step
	// Peers, when set, is the name of every scripted provider the
	// configuration has, this one's included: a `#scripted@<name>:` line
	// addressed to a name not among them (a typo, which would otherwise be
	// ignored as addressed to some other provider) is refused as a bad
	// request naming them. nil: a line addressed to another name is
	// another provider's, whatever the name.
	Peers []string
	// OnCall, when non-nil, is called synchronously at the start of each call,
	// before any latency, so tests can wait for "the call reached the provider"
	// without sleeping. req is a copy. It must not block forever.
	OnCall func(call int, req *Request)
}

// Scripted is a provider for development, demos and tests that answers as its
// script, or a `#scripted:` directive in the request, tells it (see the package
// documentation). It implements Provider, Streamer and Looker and is safe for
// concurrent use.
type Scripted struct {
	cfg ScriptedConfig

	mu         sync.Mutex
	calls      int
	perAttempt map[string]int
	requests   []*Request
	results    map[string]*Response
	failures   map[string]*Error
}

var (
	_ Provider = (*Scripted)(nil)
	_ Streamer = (*Scripted)(nil)
	_ Looker   = (*Scripted)(nil)
)

// NewScripted returns a scripted provider.
func NewScripted(cfg ScriptedConfig) *Scripted {
	if cfg.Name == "" {
		cfg.Name = "scripted"
	}
	cfg.Steps = append([]Step(nil), cfg.Steps...)
	cfg.Peers = slices.Clone(cfg.Peers)
	return &Scripted{
		cfg:        cfg,
		perAttempt: map[string]int{},
		results:    map[string]*Response{},
		failures:   map[string]*Error{},
	}
}

// Name returns the configured name.
func (s *Scripted) Name() string { return s.cfg.Name }

// Complete answers as the script says.
func (s *Scripted) Complete(ctx context.Context, req *Request) (*Response, error) {
	return s.call(ctx, req, nil)
}

// CompleteStream answers as the script says, passing the output to onDelta in a
// few pieces (only the delivered part for a cut, stalled or malformed stream).
func (s *Scripted) CompleteStream(ctx context.Context, req *Request, onDelta func(string)) (*Response, error) {
	return s.call(ctx, req, onDelta)
}

// Lookup returns the response of a completed call made under attemptID, or one
// set with SetLookupResult, or the failure set with SetLookupFailure.
// found=false when there is none.
func (s *Scripted) Lookup(ctx context.Context, attemptID string) (*Response, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, contextError(s.cfg.Name, ctx, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.failures[attemptID]; ok {
		c := *e
		return nil, true, &c
	}
	r, ok := s.results[attemptID]
	if !ok {
		return nil, false, nil
	}
	c := *r
	return &c, true, nil
}

// SetLookupResult makes Lookup(attemptID) find resp (a copy), as if a call whose
// answer never came back (a hang, a timeout) had completed at the provider. A nil
// resp removes the record.
func (s *Scripted) SetLookupResult(attemptID string, resp *Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if resp == nil {
		delete(s.results, attemptID)
		return
	}
	c := *resp
	s.results[attemptID] = &c
}

// SetLookupFailure makes Lookup(attemptID) find the provider's record of the
// call and report it as the failure e (a copy): a completion the provider
// refused or filtered, as a real lookup reports a stored one. A nil e removes
// it.
func (s *Scripted) SetLookupFailure(attemptID string, e *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e == nil {
		delete(s.failures, attemptID)
		return
	}
	c := *e
	s.failures[attemptID] = &c
}

// Calls returns the number of calls received.
func (s *Scripted) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// CallsFor returns the number of calls received under attemptID.
func (s *Scripted) CallsFor(attemptID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perAttempt[attemptID]
}

// Requests returns copies of the requests received, in arrival order.
func (s *Scripted) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = cloneRequest(r)
	}
	return out
}

// cloneRequest deep-copies r.
func cloneRequest(r *Request) *Request {
	c := *r
	c.Messages = append([]Message(nil), r.Messages...)
	if r.Temperature != nil {
		t := *r.Temperature
		c.Temperature = &t
	}
	if r.TopP != nil {
		p := *r.TopP
		c.TopP = &p
	}
	c.Stop = append([]string(nil), r.Stop...)
	c.LogitBias = maps.Clone(r.LogitBias)
	if r.Seed != nil {
		v := *r.Seed
		c.Seed = &v
	}
	if r.ResponseFormat != nil {
		f := *r.ResponseFormat
		f.Schema = append([]byte(nil), r.ResponseFormat.Schema...)
		c.ResponseFormat = &f
	}
	return &c
}
