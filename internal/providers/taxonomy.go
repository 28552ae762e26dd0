package providers

// policy is the taxonomy's default fault and action for one kind.
type policy struct {
	fault   Fault
	action  Action
	unknown bool // OutcomeUnknown by default
}

// policies is the one table every adapter classifies through. Notes on choices:
//   - context_length_exceeded is the caller's fault and never retried on the same
//     model, but its action is failover: another provider of the route may have a
//     larger context window. Content policy and plain bad requests stop: another
//     provider would reject the same request (a route may still opt to fail over
//     on content policy, SPEC §6.3; that is routing policy, not taxonomy).
//   - auth, quota and model-not-found are our configuration of that one provider:
//     fail over, do not retry.
//   - the same provider is retried only for what SPEC §6.2 lists as transient:
//     429, 5xx (529 included) and a connection reset before any response byte
//     (a refused connection, which sent nothing, too). HTTP 408 (OpenRouter's "Your request timed out": the upstream model
//     ran out of time, the work may have been done and billed) and 409 (no
//     transient condition for any LLM API the adapters know) are the provider's
//     fault, counted against its breaker, but fail over instead.
//   - timeout is our deadline passing after the request may have been sent: the
//     outcome is unknown (SPEC §6.7) and the same provider is not retried.
var policies = map[Kind]policy{
	KindBadRequest:        {FaultCaller, ActionStop, false},
	KindContextLength:     {FaultCaller, ActionFailover, false},
	KindContentPolicy:     {FaultCaller, ActionStop, false},
	KindAuth:              {FaultRouter, ActionFailover, false},
	KindQuotaExceeded:     {FaultRouter, ActionFailover, false},
	KindModelNotFound:     {FaultRouter, ActionFailover, false},
	KindRequestTimeout:    {FaultProvider, ActionFailover, false},
	KindConflict:          {FaultProvider, ActionFailover, false},
	KindRateLimited:       {FaultProvider, ActionRetry, false},
	KindServerError:       {FaultProvider, ActionRetry, false},
	KindUnavailable:       {FaultProvider, ActionRetry, false},
	KindGatewayTimeout:    {FaultProvider, ActionRetry, false},
	KindConnRefused:       {FaultNetwork, ActionRetry, false},
	KindConnReset:         {FaultNetwork, ActionRetry, false},
	KindTimeout:           {FaultNetwork, ActionFailover, true},
	KindStreamStalled:     {FaultProvider, ActionFailover, false},
	KindStreamCut:         {FaultProvider, ActionFailover, false},
	KindStreamMalformed:   {FaultProvider, ActionFailover, false},
	KindStreamTimeout:     {FaultProvider, ActionFailover, false},
	KindEmptyResponse:     {FaultProvider, ActionFailover, false},
	KindMalformedResponse: {FaultProvider, ActionFailover, false},
	KindCancelled:         {FaultRouter, ActionStop, false},
	KindMisconfigured:     {FaultRouter, ActionFailover, false},
	KindUnknownProvider:   {FaultProvider, ActionFailover, false},
	KindResponseTooLarge:  {FaultProvider, ActionFailover, false},
	KindAdapterPanic:      {FaultRouter, ActionFailover, false},
}

// KnownKind reports whether k is one of the taxonomy's kinds.
func KnownKind(k Kind) bool {
	_, ok := policies[k]
	return ok
}

// NewError returns an *Error of the given kind with the taxonomy's default Fault,
// Action and OutcomeUnknown. Set StatusCode, Code, RetryAfter and Err on the result
// as known. An unknown kind gets FaultProvider and ActionFailover.
func NewError(provider string, kind Kind, message string) *Error {
	p, ok := policies[kind]
	if !ok {
		p = policies[KindUnknownProvider]
	}
	return &Error{
		Provider:       provider,
		Kind:           kind,
		Fault:          p.fault,
		Action:         p.action,
		Message:        message,
		OutcomeUnknown: p.unknown,
	}
}

// withDefaults returns a copy of e for provider, with Fault and Action filled from
// the taxonomy where e leaves them empty.
func (e *Error) withDefaults(provider string) *Error {
	c := *e
	if c.Provider == "" {
		c.Provider = provider
	}
	if p, ok := policies[c.Kind]; ok {
		if c.Fault == "" {
			c.Fault = p.fault
		}
		if c.Action == "" {
			c.Action = p.action
		}
	}
	return &c
}
