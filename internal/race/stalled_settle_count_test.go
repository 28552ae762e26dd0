package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A stalled (not dead) orchestrator whose job recovery's leader settled
// meanwhile must not count the settlement again when it wakes. Here replica
// A stalls before it creates the fallback's attempt, while another attempt
// of the job (one A started, as a hedge would be) outlives its lease; the
// leader expires it, settles the job `unknown` and counts it
// (countExpiredUnknown, on the leader). A then finds nothing more to try and
// settles the job: the store answered the job's state (`unknown`) without
// error although the call changed nothing, and A counted
// router_jobs_settled_total{state="unknown"} a second time. Only the call
// that made the change counts.
func TestStalledOrchestratorDoesNotCountAJobRecoverySettled(t *testing.T) {
	const invalid = `{"not":"valid"}`
	obs := &settlements{counts: map[string]int{}}
	hold := newHoldAdmission("fallback", false)
	a := racetest.New(t, racetest.Options{LeaseOwner: "replica-a", Lease: time.Hour, Admission: hold, Observer: obs,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(invalid)}, {Name: "fallback", Respond: racetest.OK(validTriage)}}})
	t.Cleanup(hold.open) // before the runner stops, should the test end early
	ctx := context.Background()

	job := a.Submit(t) // the primary's answer is invalid: A fails over to the fallback
	<-hold.reached     // A stalls, about to create the fallback's attempt
	att, err := a.Store.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: "primary", Role: store.RoleHedge,
		LeaseOwner: "replica-a", LeaseFor: time.Hour, MaxInflight: 2, MaxAttempts: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Store.MarkAttemptRunning(ctx, att.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DB.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, att.ID); err != nil {
		t.Fatal(err)
	}
	// Recovery's leader (another replica, which counts the job unknown)
	// expires the attempt: it becomes unknown, and the job with it.
	if ids, err := a.Store.ExpireAttemptLeases(ctx); err != nil || len(ids) != 1 {
		t.Fatalf("recovery: %v %v, want the job made unknown", ids, err)
	}
	if j := a.Job(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("precondition: job %s after recovery expired its attempt, want unknown", j.State)
	}
	hold.open() // A wakes up: the fallback is refused, nothing is left to try
	a.Stop()    // A's orchestration has ended
	if j := a.Job(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("job %s after A's orchestration ended, want still unknown", j.State)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.counts) != 0 {
		t.Fatalf("the stalled orchestrator counted settlements %v, want none: recovery's leader settled the job (and counted it)", obs.counts)
	}
}
