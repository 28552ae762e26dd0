package race_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// deferredThird is a circuit breaker set whose third target's breaker is
// open (refused, its state shown to routing) until admitThird; the others
// admit. Once admitted, third's admissions handed back unused (the store
// refused the attempt) close refused.
type deferredThird struct {
	admitted atomic.Bool
	once     sync.Once
	refused  chan struct{}
}

func (a *deferredThird) Admit(p string) (func(race.Outcome), bool, string) {
	if p != "third" {
		return func(race.Outcome) {}, true, ""
	}
	if !a.admitted.Load() {
		return nil, false, "circuit breaker open after 5 consecutive failures; probing again in 1m0s"
	}
	return func(o race.Outcome) {
		if o == race.OutcomeIgnore {
			a.once.Do(func() { close(a.refused) })
		}
	}, true, ""
}

func (a *deferredThird) State(p string) (bool, string) {
	if p == "third" && !a.admitted.Load() {
		return false, "circuit breaker open after 5 consecutive failures; probing again in 1m0s"
	}
	return true, ""
}

func (a *deferredThird) AdmitsIn(p string) (time.Duration, bool) {
	if p == "third" && !a.admitted.Load() {
		return time.Minute, true
	}
	return 0, true
}

// A target deferred at routing (its breaker open) that its breaker admits
// later in the race becomes eligible in the job's routing, recorded with the
// attempt about to be created (admitDeferred). When the store refused that
// attempt (here: a sibling unknown, store.ErrAttemptBlocked), which writes
// nothing, the new routing was dropped all the same: the attempt made on
// that target once the block was lifted was created with no routing, and the
// job's routing still called the target ineligible (its breaker) although it
// won the job.
func TestRoutingOfARefusedCreationGoesWithTheNextAttempt(t *testing.T) {
	adm := &deferredThird{refused: make(chan struct{})}
	obs := &providerEnded{provider: "primary", state: store.AttemptUnknown, ended: make(chan struct{})}
	secondCalled, primaryGo := make(chan struct{}), make(chan struct{})
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, MaxInflight: 3, MaxAttempts: 6}, adm, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-primaryGo
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "second", respond: hang, onCall: func(int, *providers.Request) { close(secondCalled) }}, // silent: hedged by third
		provSpec{name: "third", respond: ok(validTriage)},
	)
	letPrimaryEnd := releaser(t, primaryGo)
	job := b.submit(t)
	awaitSignal(t, secondCalled, "the hedge on second")
	letPrimaryEnd()
	awaitSignal(t, obs.ended, "the primary's attempt unknown")
	adm.admitted.Store(true) // third's next hedge is admitted, then refused by the store (the primary is unknown)
	awaitSignal(t, adm.refused, "third's hedge refused by the store while the primary is unknown")
	resolveUnknown(t, b, job.ID, "primary")

	j := b.waitSettled(t, job.ID)
	if a := attemptBy(j, "third"); j.State != store.JobSucceeded || a == nil || a.State != store.AttemptWon {
		t.Fatalf("set-up: job %s (%s), attempts %v: want third's hedge, made once the primary was resolved, to win",
			j.State, derefString(j.Error), attemptStates(j))
	}
	if d := decisionOf(t, j, "third"); !d.Eligible || d.Cause != "" {
		t.Fatalf("routing %s: third's decision %+v; want it eligible, as its breaker admitted it for the attempt that won", j.Routing, d)
	}
}
