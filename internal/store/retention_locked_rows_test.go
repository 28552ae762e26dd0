package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A job past retention one of whose rows — an attempt, a race event, an
// event, a delivery try, its key or its released key — another transaction
// holds locked (an operator's UPDATE in an open session) is passed over and
// reported busy, and the batch deletes the deletable job chosen with it; the
// next batch, walking on from where the first stopped (past the busy job),
// deletes the next one. Before, SKIP LOCKED skipped only locked job rows: the
// batch's DELETE of that row waited
// for lock_timeout (2 s) and rolled the whole batch back, and as the walk is
// oldest first every batch chose the same job, so nothing was deleted while
// the lock was held.
func TestRetentionPassesOverAJobWithALockedRow(t *testing.T) {
	older, old := retention+3*time.Hour, retention+time.Hour
	for _, tc := range []struct{ name, lock string }{ // lock locks a row of job $1
		{"attempt", `UPDATE attempts SET usage = usage WHERE job_id = $1`},
		{"race event", `UPDATE race_events SET detail = detail WHERE job_id = $1`},
		{"event", `UPDATE job_events SET tries = tries WHERE job_id = $1`},
		{"delivery try", `UPDATE webhook_deliveries SET error = error WHERE event_id IN (SELECT id FROM job_events WHERE job_id = $1)`},
		{"key", `SELECT FROM idempotency_keys WHERE job_id = $1 FOR KEY SHARE`},
		{"released key", `UPDATE released_keys SET expired_at = expired_at WHERE job_id = $1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			b.withWebhook(t)
			ctx := context.Background()
			var locked *store.Job
			if tc.name == "released key" {
				locked = b.released(t, "locked", older)
			} else {
				locked = b.withEverything(t, "locked")
				b.expiredAgo(t, locked.ID, older)
			}
			first, second := b.withEverything(t, "first"), b.withEverything(t, "second")
			b.expiredAgo(t, first.ID, old)
			b.expiredAgo(t, second.ID, old-time.Minute)

			holder, err := b.db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback(ctx) //nolint:errcheck
			if tag, err := holder.Exec(ctx, tc.lock, locked.ID); err != nil || tag.RowsAffected() == 0 {
				t.Fatalf("lock the %s of the oldest job: %v (%d rows)", tc.name, err, tag.RowsAffected())
			}

			guard, cancel := context.WithTimeout(ctx, 30*time.Second) // a hang guard, not a timing assertion
			defer cancel()
			deleted, busy, next, err := b.st.DeleteExpiredJobsFrom(guard, retention, 2, store.RetentionCursor{})
			if err != nil || deleted != 1 || !slices.Equal(busy, []string{locked.ID}) {
				t.Fatalf("batch of 2 with the oldest job's %s locked: deleted %d, busy %v (err %v); want 1 deleted and the locked job %s busy",
					tc.name, deleted, busy, err, locked.ID)
			}
			if b.exists(t, first.ID) || !b.exists(t, second.ID) {
				t.Fatalf("after the first batch: first job there %v, second %v; want the first deleted, the second kept for the next batch",
					b.exists(t, first.ID), b.exists(t, second.ID))
			}
			deleted, busy, _, err = b.st.DeleteExpiredJobsFrom(guard, retention, 2, next)
			if err != nil || deleted != 1 || len(busy) != 0 || b.exists(t, second.ID) {
				t.Fatalf("next batch, walking on past the busy job: deleted %d, busy %v (err %v); want the second job deleted", deleted, busy, err)
			}
			if !b.exists(t, locked.ID) {
				t.Fatalf("the job whose %s another transaction holds was deleted", tc.name)
			}

			// Once the lock is released, the job goes with the next batch.
			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if deleted, busy, _, err := b.st.DeleteExpiredJobsFrom(ctx, retention, 2, store.RetentionCursor{}); err != nil || deleted != 1 || len(busy) != 0 || b.exists(t, locked.ID) {
				t.Fatalf("once unlocked: deleted %d, busy %v (err %v); want the formerly locked job deleted", deleted, busy, err)
			}
		})
	}
}

// withEverything makes a job of acme (an owner with a webhook) that succeeded,
// with an attempt, a race event, and a delivered event with its delivery try:
// a row in every table retention deletes from but released_keys.
func (b *bundle) withEverything(t *testing.T, key string) *store.Job {
	t.Helper()
	j, ev := b.finished(t, key)
	b.exec(t, `INSERT INTO race_events (job_id, attempt_id, kind) SELECT job_id, id, 'test' FROM attempts WHERE job_id = $1`, j.ID)
	b.record(t, ev, store.EventDelivered)
	return j
}
