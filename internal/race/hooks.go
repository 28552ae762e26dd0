package race

import (
	"time"

	"github.com/routerhq/router/internal/providers"
)

// Outcome is what an attempt's end means for its provider's circuit breaker.
type Outcome int

const (
	// OutcomeSuccess: the provider did its job (including caller errors such as
	// a 400: the provider answered correctly).
	OutcomeSuccess Outcome = iota
	// OutcomeFailure: the provider or the network failed (5xx, 429, timeout,
	// cut stream, invalid output).
	OutcomeFailure
	// OutcomeIgnore: not the provider's doing (a hedge loser that had begun
	// answering or was never hedged, a job cancelled by the router);
	// excluded from the breaker's counts. A loser that a hedge was started
	// for because it had no response byte, and that still had none when
	// another attempt won, is OutcomeFailure: a target that accepts requests
	// and never answers would otherwise hide behind its hedges, its breaker
	// closed (or half-open) for ever. Only once it has been silent past its
	// loss bar: a target known to answer later, and an attempt admitted as
	// its breaker's half-open probe, are kept running after the win until
	// then (lossBar, keepLoser), so that a healthy target merely slower than
	// the hedge delay is not failed. The router's drain ends the keeping:
	// a loser it cuts under its bar is OutcomeIgnore.
	OutcomeIgnore
)

// Admission is a per-provider admission control, such as a circuit breaker.
// Admit is asked before an attempt is created on provider; when ok, release
// must be called exactly once with the attempt's outcome. When not ok, reason
// says why in words for the job's routing.
type Admission interface {
	Admit(provider string) (release func(Outcome), ok bool, reason string)
}

// Observer hears about the race as it happens (metrics). Calls must not block.
// Its provider is the name of the breaker that admitted the attempt: the
// target's id, or the breaker of the model sent in its place (breakerOf).
//
// AttemptFinished's latency is the provider call's, from send to its answer
// or error — the attempt's stored latency_ms, without the router's own
// judging and recording — and 0 for an attempt never sent or abandoned.
// JobSettled is called once per job run this process ended, with the state
// it left the job in (succeeded, failed, unknown, cancelled): never for a job
// left pending or running.
type Observer interface {
	AttemptStarted(provider, role string)
	AttemptFinished(provider, role, state string, kind providers.Kind, latency time.Duration, usage providers.Usage)
	RaceLost(provider string)
	HedgeStarted(provider string)
	JobSettled(state string)
}

// HedgeDenialObserver is an optional part of an Observer: it hears, once per
// job run, that the route's hedge budget denied the job an extra call in
// flight (a hedge, or a retry or failover beside its other calls) — the
// denial its routing records as `hedge_denied`.
type HedgeDenialObserver interface {
	HedgeDenied(route string)
}

// nopObserver is used when no Observer is configured.
type nopObserver struct{}

func (nopObserver) AttemptStarted(string, string) {}
func (nopObserver) AttemptFinished(string, string, string, providers.Kind, time.Duration, providers.Usage) {
}
func (nopObserver) RaceLost(string)     {}
func (nopObserver) HedgeStarted(string) {}
func (nopObserver) JobSettled(string)   {}

// outcomeOf classifies an attempt's end for its breaker.
func outcomeOf(res attemptResult) Outcome {
	if res.cutByDeadline {
		// The router's own deadline ended it before the target had its
		// chance (excusedByDeadline): says nothing of the target.
		return OutcomeIgnore
	}
	if res.err != nil && res.err.Kind == KindShutdown {
		return OutcomeIgnore // cut by this router's shutdown: nothing of the target
	}
	switch {
	case res.discarded:
		return OutcomeSuccess // a valid answer, after its job was cancelled or its attempt resolved
	case res.silentLoser:
		return OutcomeFailure // silent past the hedge it caused, until another attempt won
	}
	switch res.state {
	case "won", "lost":
		return OutcomeSuccess
	case "cancelled", "abandoned", attemptUnsent:
		return OutcomeIgnore
	case "invalid":
		if res.callers {
			return OutcomeIgnore // the caller's own schema: the provider answered
		}
		return OutcomeFailure
	case "unknown":
		return OutcomeFailure
	}
	if res.err != nil && res.err.Fault == providers.FaultCaller {
		return OutcomeSuccess
	}
	return OutcomeFailure
}

// excusedByDeadline says whether the job's deadline, having cut an attempt
// short, excuses its target, so that its breaker does not count the attempt.
//
// It does when the provider had begun answering (received): a long answer is
// the request meeting the route's deadline, not a target that is down. It
// does when the attempt got less time than its target's first-byte budget
// (firstByteBudget) and was not the job's opening attempt: a late hedge or
// failover has only what is left of the job's time. It does not when the
// attempt had its whole first-byte budget (waited, from its send to the cut,
// is at least that), nor when it was the attempt sent with its job as the
// job's run began (opening) — that attempt had all the time the route gives
// any attempt, and a route whose deadline is shorter than a target's
// first_byte_timeout must still open the breaker of a target that never
// answers: otherwise every job sent to it ends unknown and it stays closed.
func excusedByDeadline(received bool, waited time.Duration, t *Target, opening bool) bool {
	if received {
		return true
	}
	if opening {
		return false
	}
	budget := t.firstByteBudget()
	return budget <= 0 || waited < budget
}

// firstByteBudget is how long an attempt on the target may wait for its first
// response byte before its own deadlines end it: first_byte_timeout when it
// is set and shorter than timeout, else timeout; 0 when neither is set.
func (t *Target) firstByteBudget() time.Duration {
	if t == nil {
		return 0
	}
	if fb := t.FirstByteTimeout; fb > 0 && (t.Timeout <= 0 || fb < t.Timeout) {
		return fb
	}
	return t.Timeout
}

// CostObserver is an Observer that also counts what attempts cost (found by
// type assertion). Calls must not block.
type CostObserver interface {
	AttemptCost(owner, provider, model string, usd float64)
}

// observeCost reports an attempt's cost when its target has a price and the
// provider reported usage.
func observeCost(obs Observer, owner, provider, model string, price *providers.Price, u providers.Usage) {
	co, ok := obs.(CostObserver)
	if !ok {
		return
	}
	if usd, ok := price.Cost(u); ok {
		co.AttemptCost(owner, provider, model, usd)
	}
}
