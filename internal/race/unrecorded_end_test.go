package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// An attempt's definitive failure whose record cannot be written at all —
// its row held by another transaction for longer than the store tries it
// again — leaves the attempt in flight in the database. The race does not
// go on as if it had ended: it fails over to no other target beside it (the
// request would be sent again while the job cannot be settled), and the job
// is left to the attempt's lease and recovery, as after an unknown end whose
// record failed. Before, the race failed over at once (review rrace10, F1).
func TestUnwritableFailureIsNotFailedOver(t *testing.T) {
	called, proceed := make(chan struct{}), make(chan struct{})
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(called)
				<-proceed
			}
			return providers.Step{Output: `{"not":"a triage"}`} // invalid: would fail over
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-called
	primary := job.Attempts[0].ID
	_, release := holdRows(t, b, `SELECT FROM attempts WHERE id = $1 FOR UPDATE`, primary)
	close(proceed)
	// Held for as long as the run lasts: the record gives up on every try.
	deadline := time.Now().Add(hangBound)
	for b.runner.Runs(job.ID) {
		if time.Now().After(deadline) {
			t.Fatal("the job's run never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	release()
	j := b.job(t, job.ID)
	p := attemptBy(j, "primary")
	if n := b.prov["fallback"].Calls(); n != 0 || p == nil || p.State != store.AttemptRunning || j.State != store.JobRunning {
		t.Fatalf("job %s, attempts %v, fallback called %d time(s): want the fallback not sent the request beside the primary's "+
			"attempt, which is still running in the database (its end could not be recorded), and the job left to its lease",
			j.State, attemptStates(j), n)
	}
}

// A transient failure (HTTP 503, retries left on its target) found by
// reconciliation for an attempt that ended unknown while its job's
// orchestration was live (a hedge in flight) is retried on that target, as
// the live race retries it and as a resumed race does (resumeRetry). Before,
// the live race saw only that the block had lifted: with no target left to
// fail over to, the job failed (review rrace10, suspicion 3).
func TestResolvedTransientFailureWhileLiveIsRetried(t *testing.T) {
	obs := newHoldFinished(1) // the primary's end
	fallbackCalled, fallbackGo := make(chan struct{}), make(chan struct{})
	b := setupObserved(t, race.Route{HedgeAfter: 50 * time.Millisecond, MaxInflight: 2, MaxAttempts: 5}, nil, obs,
		provSpec{name: "primary", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				<-fallbackCalled // ends only once its hedge is in flight
				return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
					Message: "no response byte before the first-byte timeout"}}
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(fallbackCalled)
				<-fallbackGo
			}
			return providers.Step{Status: 503} // no retries configured
		}},
	)
	job := b.submit(t)
	<-obs.held // the primary's attempt is recorded unknown; its hedge is in flight
	if _, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed",
		Note: "reconciled: the provider answered 503",
		Error: map[string]any{"kind": "unavailable", "fault": "provider", "action": "retry", "status": 503,
			"message": "provider primary: unavailable (HTTP 503): service unavailable"},
	}); err != nil {
		t.Fatal(err)
	}
	close(obs.release)
	close(fallbackGo)

	j := b.waitSettled(t, job.ID)
	if n := b.prov["primary"].Calls(); n != 2 || j.State != store.JobSucceeded {
		t.Fatalf("job %s (%s), attempts %v, primary called %d time(s): want the primary's transient failure, found by "+
			"reconciliation, retried on it (it answers then) and the job succeeded", j.State, derefString(j.Error), attemptStates(j), n)
	}
}
