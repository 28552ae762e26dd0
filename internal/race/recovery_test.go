package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// An unknown attempt on a provider that can look requests up is reconciled by
// the recovery loop: found and valid → the job succeeds from it, with no new
// provider call.
func TestReconcileFoundCompletesJob(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	b.prov["primary"].SetLookupResult(j.Attempts[0].ID, &providers.Response{Content: validTriage, Model: "primary-model",
		ResponseID: "resp-1", Created: time.Now(), Usage: providers.Usage{TotalTokens: 9}})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || *j.CompletedBy != j.Attempts[0].ID || len(j.Attempts) != 1 {
		t.Fatalf("after reconcile: %s %+v", j.State, j.Attempts)
	}
	if b.prov["primary"].Calls() != 1 || b.prov["fallback"].Calls() != 0 {
		t.Fatalf("calls primary=%d fallback=%d", b.prov["primary"].Calls(), b.prov["fallback"].Calls())
	}
}

// Not found at the provider → the attempt failed (no work was done) and the
// job continues to the fallback.
func TestReconcileNotFoundContinues(t *testing.T) {
	b, job, _ := unknownOnHangingPrimary(t, validTriage)
	b.runner.RecoverOnce(context.Background(), 10)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || j.Attempts[0].State != store.AttemptFailed || attemptBy(j, "fallback").State != store.AttemptWon {
		t.Fatalf("after reconcile: %s %+v", j.State, j.Attempts)
	}
}

// Expired attempt leases become unknown, and orphaned jobs are taken over
// exactly once (in-process version of the e2e crash test).
func TestRecoveryExpiresLeasesAndAdoptsOrphans(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	ctx := context.Background()
	job := b.submit(t)
	b.waitSettled(t, job.ID)
	// A job whose creator died before starting it.
	orphan := b.submitWithoutRunning(t, "dead-process")
	// An attempt whose router died mid-call.
	crashed := b.submitWithoutRunning(t, "dead-process")
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: crashed.ID, Provider: "primary", Role: store.RolePrimary,
		LeaseOwner: "dead-process", LeaseFor: time.Millisecond, Lookup: true}) // sent to be looked up, as its runner would
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1 OR id = $2`, orphan.ID, crashed.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	b.runner.RecoverOnce(ctx, 10)
	b.runner.RecoverOnce(ctx, 10) // a second pass must not start anything twice
	if j := b.waitSettled(t, orphan.ID); j.State != store.JobSucceeded || len(j.Attempts) != 1 {
		t.Fatalf("orphan: %s with %d attempts", j.State, len(j.Attempts))
	}
	// The expired attempt became unknown (never re-dispatched blindly); the
	// scripted provider's lookup then reported no record of it, so it failed,
	// and — the provider provably did no work, and only the router's death
	// cut it — the job ran on the same provider again, once.
	j := b.waitSettled(t, crashed.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 || j.Attempts[0].State != store.AttemptFailed ||
		!strings.Contains(string(j.Attempts[0].Error), "lease_expired") || !strings.Contains(string(j.Attempts[0].Error), "no record") {
		t.Fatalf("crashed: %s %+v", j.State, j.Attempts)
	}
	if b.prov["primary"].Calls() != 3 { // the first job, the orphan and the crashed job's new attempt
		t.Fatalf("provider calls %d, want 3", b.prov["primary"].Calls())
	}
}

// A job left running with an unknown attempt and nothing in flight (its router
// died between recording the attempt and settling the job) is settled by
// recovery as unknown, not left running forever.
func TestRecoverySettlesStrandedUnknown(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	ctx := context.Background()
	job := b.submitWithoutRunning(t, "dead-process")
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: "primary", Role: store.RolePrimary, LeaseOwner: "dead-process"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	// Keep reconciliation out of it: the scripted provider would answer "no record".
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET finished_at = now() + interval '1 hour' WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	b.runner.RecoverOnce(ctx, 10)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobUnknown || len(j.Attempts) != 1 || b.prov["primary"].Calls() != 0 {
		t.Fatalf("stranded job: %s, %d attempts, %d calls", j.State, len(j.Attempts), b.prov["primary"].Calls())
	}
}

// An orchestrator whose lease was taken over leaves the job alone: it must not
// fail a job another router now runs.
func TestLostLeaseDoesNotSettleJob(t *testing.T) {
	var b *bundle
	var jobID string
	b = setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				// Another router takes the job over during the backoff.
				if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET lease_owner = 'router-b' WHERE id = $1`, jobID); err != nil {
					t.Error(err)
				}
				return providers.Step{Status: 429, RetryAfter: 10 * time.Millisecond}
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submitWithoutRunning(t, "test-runner")
	jobID = job.ID
	b.runner.Submit(job)
	b.stop() // waits for the orchestration to end
	j := b.job(t, job.ID)
	if j.State != store.JobRunning || len(j.Attempts) != 1 || b.prov["primary"].Calls() != 1 || b.prov["fallback"].Calls() != 0 {
		t.Fatalf("after losing the lease: %s, %d attempts, calls %d/%d", j.State, len(j.Attempts),
			b.prov["primary"].Calls(), b.prov["fallback"].Calls())
	}
}

// A resumed race that fails explains every provider's failure, including those
// of the orchestration before the resume.
func TestResumedFailureKeepsEarlierReasons(t *testing.T) {
	b, job, _ := unknownOnHangingPrimary(t, `{"category":"nope"}`)
	ctx := context.Background()
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "checked"}); err != nil {
		t.Fatal(err)
	}
	b.runner.Submit(job)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "primary: ") || !strings.Contains(*j.Error, "fallback: ") {
		t.Fatalf("job %s error %v", j.State, j.Error)
	}
}
