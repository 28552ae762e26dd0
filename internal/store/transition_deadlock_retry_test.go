package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/routerhq/router/internal/store"
)

// A cancellation locks the job's row and then its key's; a path batch that
// carries a resend of the same key and the job's win locks them the other
// way round (the resend's INSERT … ON CONFLICT DO UPDATE locks the live key's
// row, the win the job's). When the two meet, PostgreSQL aborts one of them
// (40P01). The cancellation, its victim here (it waited first, so its
// deadlock check runs first), is run again once the batch's transaction ends,
// and succeeds: before, it answered the deadlock, which the API turned into
// a 500.
func TestCancelJobRetriesAfterDeadlockWithBatch(t *testing.T) {
	b := setup(t)
	// PostgreSQL runs a waiter's deadlock check once, deadlock_timeout (1 s)
	// after it began to wait: on a loaded machine the batch's side may come
	// to wait only after the cancellation's check found no cycle yet, and
	// then its own check finds it and makes the batch the victim — a run
	// that does not test the cancellation's retry. Such a run is made again
	// (a precondition, not the assertion), a few times at most.
	for try := range 5 {
		if cancelMeetsBatchDeadlock(t, b, fmt.Sprintf("dl-%d", try)) {
			return
		}
	}
	t.Fatal("precondition: in 5 tries the batch's side was always the deadlock's victim, never the cancellation")
}

// cancelMeetsBatchDeadlock runs the test's scenario on a job of its own key;
// false when the batch's side, not the cancellation, was the deadlock's
// victim (nothing was tested).
func cancelMeetsBatchDeadlock(t *testing.T, b *bundle, key string) bool {
	t.Helper()
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", key, `{"n":1}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}

	// The batch's side: the resend's claim of the live key locks its row.
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys AS k (owner, operation, idempotency_key, job_id, fingerprint)
		VALUES ('acme', 'triage', $1, gen_random_uuid(), '\x00') ON CONFLICT (owner, operation, idempotency_key)
		DO UPDATE SET job_id = EXCLUDED.job_id WHERE k.expires_at IS NOT NULL AND k.expires_at <= now()`, key); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- b.st.CancelJob(ctx, "acme", j.ID) }()
	// The cancellation holds the job's row and waits for the key's.
	b.awaitBlockedBy(t, pid)

	// The batch's win: the job's row, which the cancellation holds.
	if _, err := tx.Exec(ctx, `UPDATE jobs SET version = version + 1 WHERE id = $1`, j.ID); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "40P01" {
			t.Fatal(err)
		}
		_ = tx.Rollback(ctx)
		if err := <-done; err != nil { // it had waited for the batch's side
			t.Fatalf("CancelJob, after the batch's side was the victim: %v", err)
		}
		t.Logf("the batch's side was the deadlock's victim, not the cancellation: %v; again", err)
		return false
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("CancelJob: %v", err)
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobCancelled || got.Attempts[0].State != store.AttemptCancelled {
		t.Fatalf("job %s, attempt %s; want both cancelled", got.State, got.Attempts[0].State)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE job_id = $1 AND expires_at IS NOT NULL`, j.ID); n != 1 {
		t.Fatalf("the cancelled job's key has no expiry (%d rows)", n)
	}
	return true
}
