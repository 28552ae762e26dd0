package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// backdate makes job look created age ago (its creator's clock, the
// database's) and frees its lease, as if its router had died then.
func backdate(t *testing.T, b *bundle, jobID string, age time.Duration) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET created_at = now() - $2::interval,
			lease_expires_at = now() - interval '1 second' WHERE id = $1`, jobID, age); err != nil {
		t.Fatal(err)
	}
}

// The route's deadline is the whole job's, on the database clock: a job
// adopted after it passed (its router died, drained or lost its lease long
// ago) is stopped as the deadline stops it — no attempt starts — instead of
// running a fresh deadline on the adopting replica.
func TestAdoptedJobPastItsDeadlineIsStopped(t *testing.T) {
	b := setup(t, race.Route{Deadline: time.Minute}, provSpec{name: "primary", respond: ok(validTriage)})
	job := b.submitWithoutRunning(t, "dead-process")
	backdate(t, b, job.ID, 10*time.Minute)
	b.runner.RecoverOnce(context.Background(), 10)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobFailed || len(j.Attempts) != 0 || j.Error == nil || !strings.Contains(*j.Error, "deadline of 1m0s passed") {
		t.Fatalf("adopted job %s (%v) with %d attempts: want it failed by its deadline, with no attempt",
			j.State, derefString(j.Error), len(j.Attempts))
	}
	if n := b.prov["primary"].Calls(); n != 0 {
		t.Fatalf("the primary was called %d times after the job's deadline", n)
	}
}

// An adopted job runs only for what is left of its deadline: here about a
// second of an hour, so the silent primary's attempt is cut by the job's
// deadline (unknown: no byte came) rather than an hour later. On a machine
// slow enough that the second is gone before the job is read, the job is
// stopped before any attempt instead; either way the deadline counted from
// the job's creation.
func TestAdoptedJobRunsForWhatIsLeftOfItsDeadline(t *testing.T) {
	b := setup(t, race.Route{Deadline: time.Hour}, provSpec{name: "primary", respond: hang})
	job := b.submitWithoutRunning(t, "dead-process")
	backdate(t, b, job.ID, time.Hour-time.Second)
	b.runner.RecoverOnce(context.Background(), 10)
	j := b.waitSettled(t, job.ID)
	switch {
	case j.State == store.JobUnknown && len(j.Attempts) == 1 &&
		strings.Contains(string(j.Attempts[0].Error), "cut by the job's deadline"):
	case j.State == store.JobFailed && len(j.Attempts) == 0 && strings.Contains(derefString(j.Error), "deadline of 1h0m0s passed"):
	default:
		t.Fatalf("adopted job %s (%v), attempts %+v: want it ended by what was left of its deadline",
			j.State, derefString(j.Error), j.Attempts)
	}
}

// The caller's explicit retry of a failed job is a new run with a deadline of
// its own, counted from the retry, however old the job is.
func TestRetriedJobGetsAFreshDeadline(t *testing.T) {
	b := setup(t, race.Route{Deadline: time.Minute}, provSpec{name: "primary", respond: ok(validTriage)})
	ctx := context.Background()
	job := b.submitWithoutRunning(t, "dead-process")
	if st, err := b.st.SettleJob(ctx, job.ID, "every provider failed"); err != nil || st != store.JobFailed {
		t.Fatalf("settle: %s %v", st, err)
	}
	backdate(t, b, job.ID, 10*time.Minute)
	if err := b.st.RetryJob(ctx, "acme", job.ID); err != nil {
		t.Fatal(err)
	}
	b.runner.Submit(job)
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("retried job %s (%v): want it run to success", j.State, derefString(j.Error))
	}
}

// A job parked `unknown` resumes, once its unknown attempt is resolved as
// failed, as a new run with a deadline of its own: a resolution made long
// after the route's deadline (an operator's, or reconciliation's after
// execution.reconcile_after) still fails over instead of failing the job.
func TestResolvedUnknownJobGetsAFreshDeadline(t *testing.T) {
	b := setup(t, race.Route{Deadline: time.Minute},
		provSpec{name: "primary", respond: hang, timeout: 50 * time.Millisecond},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	if j := b.waitSettled(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("job %s, want unknown", j.State)
	}
	backdate(t, b, job.ID, 10*time.Minute)
	resume, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "checked late"})
	if err != nil || !resume {
		t.Fatalf("resolve: resume=%v err=%v", resume, err)
	}
	b.runner.Submit(job)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || attemptBy(j, "fallback") == nil {
		t.Fatalf("resolved job %s (%v), attempts %+v: want it failed over to the fallback", j.State, derefString(j.Error), j.Attempts)
	}
}
