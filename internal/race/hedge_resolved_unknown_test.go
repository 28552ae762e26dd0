package race_test

import (
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// SPEC §6.7, §6.9: an unknown attempt blocks new attempts only while it is
// unknown, and the database says so, not the orchestrator's memory. Here the
// primary's attempt is resolved `failed` (reconciliation found no record)
// before the orchestrator learns that it went unknown, while its hedge is
// still in flight and silent. Nothing blocks the job any more: the silent
// hedge is hedged in turn on the third target, and the job succeeds — not
// left to run to its own deadline and end unknown because the orchestrator
// still believed the job blocked until nothing was in flight.
func TestHedgeOfSiblingAfterUnknownResolved(t *testing.T) {
	obs := newHoldFinished(1) // the primary's end: the fallback hangs, the third is not called yet
	fallbackCalled := make(chan struct{})
	var once sync.Once
	b := setupObserved(t, race.Route{HedgeAfter: 100 * time.Millisecond, MaxInflight: 2, MaxAttempts: 5}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-fallbackCalled // ends only once its hedge is in flight
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: hang, timeout: 4 * time.Second,
			onCall: func(int, *providers.Request) { once.Do(func() { close(fallbackCalled) }) }},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-obs.held // the primary's attempt is recorded unknown; the orchestrator has not seen it
	if _, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "reconciliation: no record"}); err != nil {
		t.Fatal(err)
	}
	close(obs.release)

	j := b.waitSettled(t, job.ID)
	if a := attemptBy(j, "fallback"); a == nil || a.Role != store.RoleHedge {
		t.Fatalf("set-up: want the fallback's attempt to be the primary's hedge, got %+v", a)
	}
	if j.State != store.JobSucceeded || b.prov["third"].Calls() != 1 {
		t.Fatalf("job %s (%s), attempts %v, third called %d times: want the silent hedge hedged on third once nothing blocked the job",
			j.State, derefString(j.Error), attemptStates(j), b.prov["third"].Calls())
	}
}
