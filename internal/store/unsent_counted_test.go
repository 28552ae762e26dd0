package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// checkUnsentNotCounted checks that the job's attempts never sent count
// against nothing: its attempt_base is still 0 (no retry moved it), and an
// attempt created under max_attempts = sent+1 is admitted, where sent is the
// number of attempts the job sent. The attempt created is left in flight.
func checkUnsentNotCounted(t *testing.T, b *bundle, jobID string, sent int) {
	t.Helper()
	if n := count(t, b, `SELECT attempt_base FROM jobs WHERE id = $1`, jobID); n != 0 {
		t.Fatalf("attempt_base %d, want 0: only the caller's retry moves it", n)
	}
	if _, err := b.st.CreateAttempt(context.Background(), store.NewAttempt{JobID: jobID, Provider: "p1", Role: store.RolePrimary,
		LeaseOwner: "replica-b", LeaseFor: time.Hour, MaxAttempts: sent + 1}); err != nil {
		t.Fatalf("an attempt under max_attempts %d: %v: want it created, the attempt never sent not counted", sent+1, err)
	}
}

// sentThenUnsent makes a leased job whose first attempt was sent and
// answered (invalid), then a failover created after it, never sent, whose
// lease has expired, recovery having marked it (and the job) unknown: a run
// stalled between creating the failover and sending it.
func sentThenUnsent(t *testing.T, b *bundle, key string) (j *store.Job, unsent *store.Attempt) {
	t.Helper()
	ctx := context.Background()
	j = leasedJob(t, b, key, true)
	if err := b.st.FinishAttempt(ctx, j.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptInvalid,
		Error: map[string]any{"kind": "invalid_output", "fault": "provider", "message": "not valid"}}); err != nil {
		t.Fatal(err)
	}
	unsent, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleFailover,
		LeaseOwner: "replica-a", LeaseFor: time.Hour, Orchestrator: "replica-a", MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	expireAttempt(t, b, unsent.ID)
	expireJobLease(t, b, j.ID)
	recoverExpired(t, b, j.ID)
	return j, unsent
}

// checkSentStillCounted checks that the job's attempt sent before the unsent
// one still counts against max_attempts: max_attempts 1 refuses a new
// attempt, max_attempts 2 admits one.
func checkSentStillCounted(t *testing.T, b *bundle, jobID string) {
	t.Helper()
	ctx := context.Background()
	na := store.NewAttempt{JobID: jobID, Provider: "p3", Role: store.RoleFailover, LeaseOwner: "replica-b", LeaseFor: time.Hour, MaxAttempts: 1}
	if _, err := b.st.CreateAttempt(ctx, na); !errors.Is(err, store.ErrAttemptLimit) {
		t.Fatalf("an attempt under max_attempts 1 after one sent: %v, want ErrAttemptLimit: the attempt sent before the unsent one no longer counts", err)
	}
	na.MaxAttempts = 2
	if _, err := b.st.CreateAttempt(ctx, na); err != nil {
		t.Fatalf("an attempt under max_attempts 2 after one sent and one never sent: %v, want it created", err)
	}
}

// A failover recorded as never sent after its lease expired
// (RecordNotSentExpired) moved the job's attempt_base past it: the attempt
// sent before it stopped counting against max_attempts, and a resumed race
// sent to its provider again. Found by review.
func TestNotSentExpiredFailoverKeepsTheSentAttemptCounted(t *testing.T) {
	b := setup(t)
	j, unsent := sentThenUnsent(t, b, "expired-failover")
	resume, err := b.st.RecordNotSentExpired(context.Background(), j.ID, unsent.ID, "the request was never sent")
	if err != nil || !resume {
		t.Fatalf("RecordNotSentExpired: resume %v, err %v: want the job resumed", resume, err)
	}
	checkSentStillCounted(t, b, j.ID)
}

// The same through the hand-over of a stopping router (HandOverUnsent).
func TestHandedOverFailoverKeepsTheSentAttemptCounted(t *testing.T) {
	b := setup(t)
	j, unsent := sentThenUnsent(t, b, "handover-failover")
	if err := b.st.HandOverUnsent(context.Background(), j.ID, unsent.ID, "replica-a", "the request was never sent: the router was shutting down"); err != nil {
		t.Fatalf("HandOverUnsent: %v", err)
	}
	checkSentStillCounted(t, b, j.ID)
}

// jobByKey is the id of the job under idempotency key key.
func jobByKey(t *testing.T, b *bundle, key string) string {
	t.Helper()
	var id string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT id::text FROM jobs WHERE idempotency_key = $1`, key).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
