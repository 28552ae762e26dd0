package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// settled makes a job of an owner without a webhook (so no event holds it
// back) that succeeded.
func (b *bundle) settled(t *testing.T, key string) *store.Job {
	t.Helper()
	return b.succeeded(t, "plain", key)
}

// succeeded makes a job of owner (operation "op", one attempt) that succeeded.
func (b *bundle) succeeded(t *testing.T, owner, key string) *store.Job {
	t.Helper()
	ctx := context.Background()
	j, created, err := b.st.CreateJob(ctx, newJob(t, owner, "op", key, `{"k":"`+key+`"}`))
	if err != nil || !created {
		t.Fatalf("create job: created=%v err=%v", created, err)
	}
	a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p", Role: store.RolePrimary, LeaseOwner: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)}); err != nil || !won {
		t.Fatalf("complete: won=%v err=%v", won, err)
	}
	return j
}

// released makes a settled job whose key expired and was taken over by a new
// job, so only released_keys remembers when it expired: ago.
func (b *bundle) released(t *testing.T, key string, ago time.Duration) *store.Job {
	t.Helper()
	j := b.settled(t, key)
	b.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE job_id = $1`, j.ID)
	if _, created, err := b.st.CreateJob(context.Background(), newJob(t, "plain", "op", key, `{"k":"again"}`)); err != nil || !created {
		t.Fatalf("reuse the key: created=%v err=%v", created, err)
	}
	b.exec(t, `UPDATE released_keys SET expired_at = now() - $2::interval WHERE job_id = $1`, j.ID, ago)
	b.exec(t, `UPDATE jobs SET updated_at = now() - $2::interval WHERE id = $1`, j.ID, ago)
	return j
}

// expiredAgo moves a job's key expiry and last change back by ago.
func (b *bundle) expiredAgo(t *testing.T, jobID string, ago time.Duration) {
	t.Helper()
	b.exec(t, `UPDATE idempotency_keys SET expires_at = now() - $2::interval WHERE job_id = $1`, jobID, ago)
	b.exec(t, `UPDATE jobs SET updated_at = now() - $2::interval WHERE id = $1`, jobID, ago)
}

// Retention walks the expired keys (and the released ones) oldest first, a
// batch at a time. Candidates it must keep — a job whose row says it is not
// finished or changed since its key expired (rows an earlier version or a
// hand repair can leave), or a job another transaction holds locked — must
// not take the batch's places: when they did, every pass picked the same
// oldest ones, refused them, deleted nothing and stopped, and nothing newer
// was ever deleted.
func TestRetentionIsNotStalledByCandidatesItKeeps(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	old, older := retention+2*time.Hour, retention+3*time.Hour

	// By key expiry, the two oldest are refused by the job's own row.
	notFinished := b.settled(t, "not-finished")
	b.expiredAgo(t, notFinished.ID, older)
	b.exec(t, `UPDATE jobs SET state = 'unknown', completed_by = NULL, result = NULL WHERE id = $1`, notFinished.ID)
	touched := b.settled(t, "touched")
	b.expiredAgo(t, touched.ID, older)
	b.exec(t, `UPDATE jobs SET updated_at = now() WHERE id = $1`, touched.ID)
	byKey := b.settled(t, "by-key")
	b.expiredAgo(t, byKey.ID, old)

	// By released key, the oldest is locked by another transaction, the next
	// is refused by its row.
	locked := b.released(t, "locked", older)
	running := b.released(t, "running", older)
	b.exec(t, `UPDATE jobs SET state = 'running', completed_by = NULL, result = NULL WHERE id = $1`, running.ID)
	byRelease := b.released(t, "by-release", old)

	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, locked.ID); err != nil {
		t.Fatal(err)
	}

	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 2); err != nil || n != 2 {
		t.Fatalf("batch of 2: deleted %d jobs (err %v), want the two deletable ones behind the kept ones", n, err)
	}
	for _, j := range []*store.Job{byKey, byRelease} {
		if b.exists(t, j.ID) {
			t.Fatalf("job %s (key %s), past retention, is still there", j.ID, j.IdempotencyKey)
		}
	}
	for _, j := range []*store.Job{notFinished, touched, locked, running} {
		if !b.exists(t, j.ID) {
			t.Fatalf("job %s (key %s), which retention must keep, was deleted", j.ID, j.IdempotencyKey)
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := b.st.DeleteExpiredJobs(ctx, retention, 2); err != nil || n != 1 || b.exists(t, locked.ID) {
		t.Fatalf("once unlocked: deleted %d jobs (err %v), want the formerly locked one", n, err)
	}
}
