package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// resolveNoRecord resolves the job's attempt seq `failed` as reconciliation
// does when the provider's lookup has no record of it (store.NoRecordNote).
func resolveNoRecord(t *testing.T, b *bundle, jobID string, seq int) (resume bool) {
	t.Helper()
	resume, err := b.st.ResolveAttempt(context.Background(), store.Resolution{JobID: jobID, Seq: seq, Outcome: "failed", Note: store.NoRecordNote})
	if err != nil {
		t.Fatal(err)
	}
	return resume
}

// A router that died between its claim's commit and the send: recovery made
// the first attempt unknown (lease_expired), and reconciliation's lookup
// found that the provider never got it, so it resolved it `failed`. That
// attempt still counted against max_attempts: on max_attempts 1 the resumed
// job failed ("attempt limit reached") without any provider call, although
// SPEC §6.8 starts such a job exactly once. An attempt its provider provably
// never worked on (store.Unworked) now counts as one never sent. Found by
// review.
func TestUnworkedAttemptDoesNotCountAgainstMaxAttempts(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "unworked", true)
	a := j.Attempts[0]
	expireAttempt(t, b, a.ID)
	recoverExpired(t, b, j.ID)
	if !resolveNoRecord(t, b, j.ID, a.Seq) {
		t.Fatal("the resolution did not resume the job")
	}
	got, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !store.Unworked(got.Attempts[0]) {
		t.Fatalf("attempt %s (%s): want it unworked", got.Attempts[0].State, got.Attempts[0].Error)
	}
	if _, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary,
		LeaseOwner: "replica-b", LeaseFor: time.Hour, MaxAttempts: 1}); err != nil {
		t.Fatalf("the first attempt a provider gets, under max_attempts 1: %v: want it created", err)
	}
}

// An attempt that went unknown because its provider did not answer in time
// is not unworked, whatever its lookup says: it counts against max_attempts
// as any failure.
func TestTimedOutAttemptResolvedNoRecordStillCounts(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "timed-out", true)
	a := j.Attempts[0]
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown,
		Error: map[string]any{"kind": "timeout", "outcome_unknown": true, "message": "no first byte"}}); err != nil {
		t.Fatal(err)
	}
	resolveNoRecord(t, b, j.ID, a.Seq)
	got, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if store.Unworked(got.Attempts[0]) {
		t.Fatalf("attempt %s (%s): a timeout is not unworked", got.Attempts[0].State, got.Attempts[0].Error)
	}
	if _, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleFailover,
		LeaseOwner: "replica-a", LeaseFor: time.Hour, MaxAttempts: 1}); !errors.Is(err, store.ErrAttemptLimit) {
		t.Fatalf("an attempt under max_attempts 1 after one that timed out: %v, want ErrAttemptLimit", err)
	}
}
