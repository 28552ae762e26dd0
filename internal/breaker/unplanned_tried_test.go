package breaker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// openPrimary is a race engine whose one target, primary, answers 503 and
// whose breaker opens for a minute on one failure; the breaker is open when
// it returns.
func openPrimary(t *testing.T) *raceBundle {
	t.Helper()
	changes := make(chan breaker.Change, 64)
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: time.Minute}},
		breaker.Options{OnChange: func(c breaker.Change) { changes <- c }})
	t.Cleanup(set.Close)
	b := setupRace(t, race.Route{Deadline: 3 * time.Second}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }})
	if j := b.waitSettled(t, b.submit(t).ID); j.State != store.JobFailed {
		t.Fatalf("first job %s, want failed on the 503", j.State)
	}
	waitChange(t, changes, "primary", breaker.StateOpen)
	return b
}

// A job without a plan whose round had already tried its only target (the
// failure that opened the target's breaker) has nothing left to wait for:
// the breaker refuses a target it would not try again anyway. It used to
// wait for the breaker until its deadline, then fail blaming the breaker and
// the deadline. It fails at once, with its attempt's failure. Found by
// review.
func TestUnplannedJobWhoseTargetsWereTriedDoesNotWaitForTheirBreakers(t *testing.T) {
	b := openPrimary(t)
	ctx := context.Background()
	job := b.Create(t, "old")
	a, err := b.Store.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: "primary", Model: "primary-model",
		Role: store.RolePrimary, LeaseOwner: "old", LeaseFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Store.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed,
		Error: map[string]any{"kind": "server_error", "fault": "provider", "action": "failover", "message": "provider answered 503"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Store.ReleaseJobLease(ctx, job.ID, "old"); err != nil {
		t.Fatal(err)
	}
	b.Runner.SubmitID(job.ID)
	j := b.waitSettled(t, job.ID)
	why := errorOf(j)
	if j.State != store.JobFailed || len(j.Attempts) != 1 {
		t.Fatalf("job %s with %d attempts (error %q); want failed with its one attempt", j.State, len(j.Attempts), why)
	}
	if !strings.Contains(why, "provider answered 503") || strings.Contains(why, "waited for a circuit breaker") || strings.Contains(why, "deadline") {
		t.Fatalf("error %q; want the attempt's failure, not a wait for the breaker until the deadline", why)
	}
}

// A job without a plan whose untried target's breaker stays open past the
// job's deadline fails at once, saying so, rather than waiting for the
// deadline to fail it for the same reason.
func TestUnplannedJobFailsAtOnceWhenNoBreakerAdmitsBeforeItsDeadline(t *testing.T) {
	b := openPrimary(t)
	j := b.waitSettled(t, b.SubmitUnplanned(t).ID)
	why := errorOf(j)
	if j.State != store.JobFailed || len(j.Attempts) != 0 || !strings.Contains(why, "circuit breaker open") {
		t.Fatalf("job %s with %d attempts (error %q); want failed with no attempt, naming the open breaker", j.State, len(j.Attempts), why)
	}
	if !strings.Contains(why, "admits an attempt before the job's deadline") || strings.Contains(why, "passed while it waited") {
		t.Fatalf("error %q; want it failed at once, no breaker admitting it before its deadline", why)
	}
}
