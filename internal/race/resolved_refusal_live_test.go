package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// Found in review (rrace10), and fixed (takeResolutions). As found:
//
// SPEC §6.3 and docs/race.md (reconciliation: "found failed → failed with the
// provider's recorded error …, and the job continues as it would have after
// that failure live: a content-policy rejection … ends the job with that
// reason, no target not yet tried started"). When the unknown attempt is
// resolved with a content-policy rejection while its job's orchestration is
// still live (a hedge in flight), the orchestration never learns what the
// resolution said: it only sees that the block is gone, and fails over to a
// target not yet tried — the request the provider refused for content policy
// is sent to a third target and the job succeeds there. Had the hedge ended
// first (job unknown, then resumed), prepare would have stopped the race
// with the refusal (refusedCaller).
func TestResolvedContentPolicyWhileLiveStopsTheRace(t *testing.T) {
	obs := newHoldFinished(1) // the primary's end
	fallbackCalled, fallbackGo := make(chan struct{}), make(chan struct{})
	b := setupObserved(t, race.Route{HedgeAfter: 50 * time.Millisecond, MaxInflight: 2, MaxAttempts: 5}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-fallbackCalled // ends only once its hedge is in flight
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(fallbackCalled)
				<-fallbackGo
			}
			return providers.Step{Status: 503} // no retries configured: fails over
		}},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-obs.held // the primary's attempt is recorded unknown; its hedge is in flight
	// Reconciliation finds the provider's record: a content-policy rejection.
	if _, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed",
		Note: "reconciled: the provider refused the request",
		Error: map[string]any{"kind": "content_policy", "fault": "caller", "action": "stop",
			"message": "provider primary: content_policy: the request was refused by the provider's content filter"},
	}); err != nil {
		t.Fatal(err)
	}
	close(obs.release)
	close(fallbackGo)

	j := b.waitSettled(t, job.ID)
	if a := attemptBy(j, "fallback"); a == nil || a.Role != store.RoleHedge {
		t.Fatalf("set-up: want the fallback's attempt to be the primary's hedge, got %+v", a)
	}
	if n := b.prov["third"].Calls(); n != 0 || j.State != store.JobFailed {
		t.Fatalf("job %s (%s), attempts %v: the third target was called %d time(s) after the primary's attempt was resolved "+
			"as a content-policy rejection; want no target not yet tried started and the job failed with the refusal",
			j.State, derefString(j.Error), attemptStates(j), n)
	}
}
