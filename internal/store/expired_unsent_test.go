package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// expireAttempt moves the attempt's lease into the past on the database's
// clock, as if its router had stalled past it.
func expireAttempt(t *testing.T, b *bundle, attemptID string) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, attemptID); err != nil {
		t.Fatal(err)
	}
}

// recoverExpired runs recovery's expiry and checks that it made the job
// unknown, as it does for an attempt whose router stalled past its lease.
func recoverExpired(t *testing.T, b *bundle, jobID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if j, err := b.st.GetJobAny(ctx, jobID); err != nil || j.State != store.JobUnknown {
		t.Fatalf("after recovery's expiry: job %v, err %v: want it unknown", j, err)
	}
}

// attemptByID is the job's attempt id (it fails the test when there is none).
func attemptByID(t *testing.T, j *store.Job, id string) store.Attempt {
	t.Helper()
	i := slices.IndexFunc(j.Attempts, func(a store.Attempt) bool { return a.ID == id })
	if i < 0 {
		t.Fatalf("job %s has no attempt %s", j.ID, id)
	}
	return j.Attempts[i]
}

// checkRunsAgain checks that the job, unknown only because of an attempt
// never sent, was given back: running, the attempt cancelled not_sent, and
// no lease, so that recovery adopts it.
func checkRunsAgain(t *testing.T, b *bundle, jobID, attemptID string) {
	t.Helper()
	ctx := context.Background()
	j, err := b.st.GetJobAny(ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	if a := attemptByID(t, j, attemptID); a.State != store.AttemptCancelled || !store.NotSent(a) {
		t.Fatalf("attempt %s (%s): want it cancelled as never sent", a.State, a.Error)
	}
	if j.State != store.JobRunning || j.Error != nil {
		t.Fatalf("job %s (error %v): want it running again, as a resolution resumes it", j.State, j.Error)
	}
	ids, err := b.st.ClaimOrphans(ctx, "replica-b", time.Minute, 10, nil)
	if err != nil || !slices.Contains(ids, jobID) {
		t.Fatalf("recovery adopted %v (err %v): want the job, running with no lease and nothing in flight", ids, err)
	}
}

// A replica that created an attempt and stalled past its lease before
// sending it (a freeze, a partition) found it `unknown` (lease_expired) when
// it woke, and the job with it. It knows the request never left, but its
// record of that was refused (the attempt was no longer in flight): the job
// waited for reconciliation or an operator (for ever without a lookup). The
// record now undoes recovery's mark, and the job runs again. Found by
// review.
func TestExpiredUnsentAttemptCanBeRecordedNotSent(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "expired-unsent", false)
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary,
		LeaseOwner: "replica-a", LeaseFor: time.Hour, Orchestrator: "replica-a"})
	if err != nil {
		t.Fatal(err)
	}
	expireAttempt(t, b, a.ID)
	expireJobLease(t, b, j.ID)
	recoverExpired(t, b, j.ID)
	if err := b.st.MarkAttemptRunning(ctx, a.ID); !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("mark running: %v, want ErrStateConflict (recovery made it unknown)", err)
	}
	if err := b.st.RecordNotSent(ctx, a.ID, "the request was never sent"); err != nil {
		t.Fatalf("RecordNotSent: %v", err)
	}
	checkRunsAgain(t, b, j.ID, a.ID)
}

// The same, for a job's only attempt, created with it, that a stopping
// replica hands over: the hand-over failed ("not found") and the job stayed
// unknown. Found by review.
func TestExpiredUnsentFirstAttemptCanBeHandedOver(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "expired-handover", true)
	a := j.Attempts[0]
	expireAttempt(t, b, a.ID)
	expireJobLease(t, b, j.ID)
	recoverExpired(t, b, j.ID)
	if err := b.st.HandOverUnsent(ctx, j.ID, a.ID, "replica-a", "the request was never sent: the router was shutting down"); err != nil {
		t.Fatalf("HandOverUnsent: %v", err)
	}
	checkRunsAgain(t, b, j.ID, a.ID)
}

// The orchestrator's record (RecordNotSentExpired) says the job runs again,
// so that its runner resumes it at once; a second record finds nothing to do.
func TestRecordNotSentExpiredResumesTheJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "expired-resume", true)
	a := j.Attempts[0]
	expireAttempt(t, b, a.ID)
	recoverExpired(t, b, j.ID)
	resume, err := b.st.RecordNotSentExpired(ctx, j.ID, a.ID, "the request was never sent")
	if err != nil || !resume {
		t.Fatalf("RecordNotSentExpired: resume %v, err %v: want the job resumed", resume, err)
	}
	if resume, err := b.st.RecordNotSentExpired(ctx, j.ID, a.ID, "again"); !errors.Is(err, store.ErrStateConflict) || resume {
		t.Fatalf("second record: resume %v, err %v: want ErrStateConflict, nothing done", resume, err)
	}
	checkRunsAgain(t, b, j.ID, a.ID)
	checkUnsentNotCounted(t, b, j.ID, 0) // last: the attempt it creates would keep checkRunsAgain from adopting the job
}

// Only an attempt recovery marked unknown is undone: one that went unknown
// because its provider did not answer in time (it may have done the work)
// stays so, and keeps its job unknown, whose error then names it alone.
func TestRecordNotSentExpiredLeavesAnAttemptAProviderCouldHaveReceived(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "expired-sibling", true)
	sent := j.Attempts[0] // running, as the claim creates it
	unsent, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge,
		LeaseOwner: "replica-a", LeaseFor: time.Hour, Orchestrator: "replica-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.FinishAttempt(ctx, sent.ID, store.AttemptOutcome{State: store.AttemptUnknown,
		Error: map[string]any{"kind": "timeout", "outcome_unknown": true, "message": "no first byte"}}); err != nil {
		t.Fatal(err)
	}
	expireAttempt(t, b, unsent.ID)
	recoverExpired(t, b, j.ID)

	// The timed-out attempt is refused, whatever its caller says.
	if _, err := b.st.RecordNotSentExpired(ctx, j.ID, sent.ID, "wrong"); !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("record of an attempt that timed out: %v, want ErrStateConflict", err)
	}
	if err := b.st.RecordNotSent(ctx, sent.ID, "wrong"); !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("RecordNotSent of an attempt that timed out: %v, want ErrStateConflict", err)
	}
	resume, err := b.st.RecordNotSentExpired(ctx, j.ID, unsent.ID, "the request was never sent")
	if err != nil || resume {
		t.Fatalf("RecordNotSentExpired: resume %v, err %v: want it recorded, the job not resumed", resume, err)
	}
	got, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a := attemptByID(t, got, sent.ID); a.State != store.AttemptUnknown {
		t.Fatalf("the attempt that timed out is %s: want it still unknown", a.State)
	}
	if a := attemptByID(t, got, unsent.ID); !store.NotSent(a) {
		t.Fatalf("the attempt never sent is %s (%s): want it cancelled not_sent", a.State, a.Error)
	}
	if got.State != store.JobUnknown || got.Error == nil {
		t.Fatalf("job %s: want it still unknown", got.State)
	}
	if e := *got.Error; !strings.Contains(e, "attempt 1 timed out") || strings.Contains(e, "attempt 2") {
		t.Fatalf("job error %q: want it to name only attempt 1, the one still unknown", e)
	}
}
